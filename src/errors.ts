import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from './db/unavailable.js';
import { routeOf } from './route-pattern.js';

/** The closed list of error codes and the HTTP status each maps to (docs/api.md, Errors). */
export const errorStatus = {
  validation: 400,
  missing_key: 401,
  invalid_key: 401,
  expired_key: 401,
  revoked_key: 401,
  invalid_scopes: 403,
  not_found: 404,
  method_not_allowed: 405,
  limit_reached: 409,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  upstream_unavailable: 502,
  upstream_timeout: 504,
  database_unavailable: 503,
  shutting_down: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetail {
  path: string;
  message: string;
}

/** An error that is a value: a code, the client-facing message, and optional details/headers. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  get status(): number {
    return errorStatus[this.code];
  }
}

/** A 400 whose message is the first problem and whose details list them all. */
export function validationError(details: ErrorDetail[]): AppError {
  return new AppError('validation', details[0]?.message ?? 'Invalid request', details);
}

export const notFoundRoute: RequestHandler = () => {
  throw new AppError('not_found', 'Not found');
};

interface BodyParserError {
  type?: string;
  status?: number;
  encoding?: string;
  charset?: string;
}

/** Express's own client error: a path parameter that is not valid percent-encoding. */
function fromRouter(err: unknown): AppError | null {
  if (err instanceof URIError || (err as Error | null)?.name === 'URIError') {
    return new AppError('validation', 'The URL is not valid percent-encoding');
  }
  return null;
}

/** A header value echoed in a message only when it is a short token (it is client input). */
const token = (value: string | undefined) => (value && /^[A-Za-z0-9._-]{1,40}$/.test(value) ? `"${value}" ` : '');

/** Turns body-parser failures into AppErrors so they share the one JSON error shape. */
function fromBodyParser(err: BodyParserError, req: Request): AppError | null {
  switch (err.type) {
    case 'entity.parse.failed':
      return new AppError('validation', 'Request body is not valid JSON');
    case 'entity.too.large':
      return new AppError('payload_too_large', 'Request body is too large');
    case 'encoding.unsupported':
      return new AppError('unsupported_media_type', `Content-Encoding ${token(err.encoding)}is not supported: use gzip, deflate, br or identity`);
    case 'charset.unsupported':
      return new AppError('unsupported_media_type', `Content-Type charset ${token(err.charset)}is not supported: use utf-8`);
    case 'request.size.invalid':
      return new AppError('validation', 'Request body length does not match Content-Length');
  }
  // A body that does not decompress: body-parser passes zlib's error on as a 400 without a type.
  const encoding = req.headers['content-encoding'];
  if (err.status === 400 && err.type === undefined && encoding && encoding.toLowerCase() !== 'identity') {
    return new AppError('validation', `Request body is not valid for its Content-Encoding ${token(encoding)}`.trimEnd());
  }
  return null;
}

/** A database that is down or restarting: 503, and the client may retry (README.md, "Running several replicas"). */
function fromDatabase(err: unknown): AppError | null {
  return isDatabaseUnavailable(err) ? new AppError('database_unavailable', 'Database unavailable', undefined, { 'Retry-After': '5' }) : null;
}

/** The one place errors become HTTP responses. Unexpected errors are logged, never echoed. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    const known = err instanceof AppError ? err : (fromBodyParser((err ?? {}) as BodyParserError, req) ?? fromDatabase(err) ?? fromRouter(err));
    const error = known ?? new AppError('internal', 'Internal error');
    if (!known) logger.error({ err, requestId: res.getHeader('x-request-id'), route: routeOf(req) }, 'unhandled error');
    else if (error.code === 'database_unavailable')
      logger.warn({ err: (err as Error).message, requestId: res.getHeader('x-request-id') }, 'database unavailable');
    for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
    // The access line (request-log.ts) says why, in the words the client got.
    res.locals.errorMessage = error.message;
    const body: { message: string; details?: ErrorDetail[] } = { message: error.message };
    if (error.details) body.details = error.details;
    res.status(error.status).json(body);
  };
}

import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';

/** The closed list of error codes and the HTTP status each maps to (CONTRACT section 3). */
export const errorStatus = {
  validation: 400,
  missing_key: 401,
  invalid_key: 401,
  invalid_scopes: 403,
  not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal: 500,
  upstream_unavailable: 502,
  upstream_timeout: 504,
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
}

/** Express's own client errors: a path parameter that is not valid percent-encoding. */
function fromRouter(err: unknown): AppError | null {
  if (err instanceof URIError || (err as { status?: number } | null)?.status === 400) {
    return new AppError('validation', 'The URL is not valid percent-encoding');
  }
  return null;
}

/** Turns body-parser failures into AppErrors so they share the one JSON error shape. */
function fromBodyParser(err: BodyParserError): AppError | null {
  if (err.type === 'entity.parse.failed') return new AppError('validation', 'Request body is not valid JSON');
  if (err.type === 'entity.too.large') return new AppError('payload_too_large', 'Request body is too large');
  if (err.type === 'encoding.unsupported' || err.type === 'charset.unsupported') {
    return new AppError('unsupported_media_type', 'Unsupported request body encoding');
  }
  return null;
}

/** The one place errors become HTTP responses. Unexpected errors are logged, never echoed. */
export function errorMiddleware(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) return next(err);
    const known = err instanceof AppError ? err : fromBodyParser(err as BodyParserError) ?? fromRouter(err);
    const error = known ?? new AppError('internal', 'Internal error');
    if (!known) logger.error({ err, requestId: res.getHeader('x-request-id'), route: req.path }, 'unhandled error');
    for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
    const body: { message: string; details?: ErrorDetail[] } = { message: error.message };
    if (error.details) body.details = error.details;
    res.status(error.status).json(body);
  };
}

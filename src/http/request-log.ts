import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics.js';
import { clientAddress } from '../auth/client-address.js';
import { routeOf } from '../route-pattern.js';

declare module 'express-serve-static-core' {
  interface Request {
    id?: string;
  }
}

const acceptedId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (a well-formed incoming `X-Request-Id` is honoured, anything else
 * replaced) and, when the response finishes, writes one log line (method, route, status,
 * duration, request id, client address; for an error answer its message as `reason`) and counts it in the HTTP metrics by the same route pattern: one
 * finish listener for both, on the hot path. Deliberately lean: no headers, no query string
 * (it may hold ids a user considers private), no key.
 */
export function requestLog(logger: Logger, metrics?: Metrics): RequestHandler {
  // The access line has fixed fields, none of them secret; a child logger with only exact
  // redaction paths costs less than half of the root logger's wildcard redaction per line.
  const access = logger.child({}, { redact: { paths: ['key', 'apiKey', 'secret', 'authorization'], censor: '[redacted]' } });
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && acceptedId.test(incoming) ? incoming : randomUUID();
    req.id = id;
    res.setHeader('X-Request-Id', id);
    res.on('finish', () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const route = routeOf(req);
      metrics?.httpRequest(route, req.method, res.statusCode, ms / 1000);
      const line = { method: req.method, route, status: res.statusCode, ms: Math.round(ms * 100) / 100, requestId: id, client: clientAddress(req) };
      const reason = res.statusCode >= 400 ? errorReason(res.locals.errorMessage) : undefined;
      access.info(reason === undefined ? line : { ...line, reason }, 'request');
    });
    next();
  };
}

/** The message an error answer gave (set by the error middleware), bounded for the log line. */
function errorReason(message: unknown): string | undefined {
  if (typeof message !== 'string') return undefined;
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';

declare module 'express-serve-static-core' {
  interface Request {
    id?: string;
  }
}

const acceptedId = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (a well-formed incoming `X-Request-Id` is honoured, anything else
 * replaced) and writes one log line when the response finishes: method, route, status,
 * duration, request id. Deliberately lean: no headers, no query string (it may hold ids a
 * user considers private), no key.
 */
export function requestLog(logger: Logger): RequestHandler {
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
      // Unmatched paths are not logged verbatim: a key pasted into a URL must not reach the log.
      const route = req.route ? `${req.baseUrl}${String(req.route.path)}` : '(unmatched)';
      access.info(
        { method: req.method, route, status: res.statusCode, ms: Math.round(ms * 100) / 100, requestId: id },
        'request',
      );
    });
    next();
  };
}

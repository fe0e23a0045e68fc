import type { Request } from 'express';

declare module 'express-serve-static-core' {
  interface Request {
    /** The route pattern of a request no Express route matched (static files), for logs. */
    routePattern?: string;
  }
}

/**
 * What logs call a request: the matched route's pattern (`/devices/:id`), a pattern a
 * middleware gave it (`/docs/assets/*`), else `(unmatched)`. Never the raw path: a key
 * pasted into a URL must not reach the log. Its own file below errors.ts and http/, which
 * both name requests in their log lines.
 */
export function routeOf(req: Request): string {
  if (req.route) return `${req.baseUrl}${String(req.route.path)}`;
  return req.routePattern ?? '(unmatched)';
}

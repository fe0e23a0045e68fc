import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { AppError } from '../../errors.js';
import { defineRoute } from '../route.js';

/**
 * docs/service.md: `GET /metrics`, the Prometheus text exposition. With `METRICS_TOKEN`
 * set it takes `Authorization: Bearer <token>` and nothing else; unset, it is open (meant for
 * an internal network). The token is not an API key: the route declares no key.
 */

const challenge = { 'WWW-Authenticate': 'Bearer realm="metrics"' };

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/**
 * Compares digests, not the strings: equal lengths whatever was sent, so neither the token's
 * content nor its length leaks through timing.
 */
function checkToken(req: Request, expected: Buffer): void {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!match) throw new AppError('missing_key', 'Missing metrics token', undefined, challenge);
  if (!timingSafeEqual(digest(match[1]!), expected)) throw new AppError('invalid_key', 'Invalid metrics token', undefined, challenge);
}

export const metrics = defineRoute({
  method: 'get',
  path: '/metrics',
  operationId: 'metrics',
  tag: 'Service',
  summary: 'Prometheus metrics',
  description: 'Prometheus text exposition. With `METRICS_TOKEN` set, send `Authorization: Bearer <METRICS_TOKEN>`; unset, it is open.',
  responses: { 200: { description: 'Metrics.', content: { type: 'text/plain', schema: { type: 'string' } } } },
  errors: { 401: '`Missing metrics token` / `Invalid metrics token` (only when `METRICS_TOKEN` is set).' },
  setup: (services) => (services.config.METRICS_TOKEN === undefined ? null : digest(services.config.METRICS_TOKEN)),
  async handler({ req, res, services, state: expected }) {
    if (expected) checkToken(req, expected);
    const body = await services.metrics.render();
    res.setHeader('Content-Type', services.metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(body);
  },
});

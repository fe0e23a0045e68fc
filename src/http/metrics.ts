import { createHash, timingSafeEqual } from 'node:crypto';
import { Router, type Request } from 'express';
import type { Config } from '../config.js';
import { AppError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';

/**
 * docs/service.md: `GET /metrics`, the Prometheus text exposition. With `METRICS_TOKEN`
 * set it takes `Authorization: Bearer <token>` and nothing else; unset, it is open (meant for
 * an internal network).
 */
export function metricsRoutes(services: { config: Config; metrics: Metrics }): Router {
  const router = Router();
  const token = services.config.METRICS_TOKEN;
  const expected = token === undefined ? null : digest(token);
  router.get('/metrics', async (req, res) => {
    if (expected) checkToken(req, expected);
    const body = await services.metrics.render();
    res.setHeader('Content-Type', services.metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(body);
  });
  return router;
}

const challenge = { 'WWW-Authenticate': 'Bearer realm="metrics"' };

/**
 * Compares digests, not the strings: equal lengths whatever was sent, so neither the token's
 * content nor its length leaks through timing.
 */
function checkToken(req: Request, expected: Buffer): void {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  if (!match) throw new AppError('missing_key', 'Missing metrics token', undefined, challenge);
  if (!timingSafeEqual(digest(match[1]!), expected)) throw new AppError('invalid_key', 'Invalid metrics token', undefined, challenge);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

import express, { Router, type RequestHandler } from 'express';
import type { Services } from '../services.js';
import { authenticate, confirmDeviceKey, principalOf } from '../auth/authenticate.js';
import { AppError, validationError } from '../errors.js';
import { jsonPath } from '../dataset/import.js';
import { enrolKey } from '../triggers/device-triggers.js';
import { eventTypes } from '../triggers/transitions.js';
import { resolveTargetProblem } from '../webhooks/target-guard.js';
import { nextPageUrl } from './base-url.js';
import { parseParams, parseQuery } from './query.js';
import { decodeHookCursor, encodeHookCursor, hookBody, hookListQuery, hookParams } from './schemas.js';

/**
 * A body that is not declared as JSON is refused before it is read (a form or text body would
 * otherwise be skipped by the JSON parser and reported as missing fields). No body at all is
 * left to the schema: "body must be a JSON object".
 */
const requireJson: RequestHandler = (req, _res, next) => {
  const empty = req.headers['transfer-encoding'] === undefined && Number(req.headers['content-length'] ?? 0) === 0;
  if (!empty && !req.is('application/json')) throw new AppError('unsupported_media_type', 'Content-Type must be application/json');
  next();
};

/** docs/webhooks.md: REST-hook subscriptions and their delivery log. */
export function hookRoutes(services: Services): Router {
  const router = Router();
  const withScope = (scope: 'hooks:write') =>
    authenticate({ headers: 'either', scope, verify: services.keys.device, attempts: services.failedAttempts });
  const auth: RequestHandler[] = [withScope('hooks:write'), confirmDeviceKey(services)];

  const { targets } = services;
  const bodySchema = hookBody(targets.allowAll, targets.origins.length > 0 || targets.ranges.length > 0);
  // Not strict: `42` or `null` parse, so the schema can say "must be a JSON object" rather
  // than the parser saying "not valid JSON".
  const jsonBody = express.json({ limit: '16kb', strict: false });

  router.post('/v1/hooks', ...auth, requireJson, jsonBody, async (req, res) => {
    const principal = principalOf(req);
    // A hook delivers device data, so subscribing needs device:read as well.
    if (principal.scopes && !principal.scopes.has('device:read')) throw new AppError('invalid_scopes', 'Invalid scopes');
    const parsed = bodySchema.safeParse(req.body);
    if (!parsed.success) {
      throw validationError(parsed.error.issues.map((i) => ({ path: jsonPath(i.path), message: i.message })));
    }
    const problem = await resolveTargetProblem(parsed.data.target_url, targets);
    if (problem) throw validationError([{ path: 'target_url', message: problem }]);
    await enrolKey(services.watches, services.poller, principal, false);
    const { hook, created } = await services.hooks.create(principal.keyHash, {
      target_url: parsed.data.target_url,
      events: parsed.data.events ?? [...eventTypes],
      device_ids: parsed.data.device_ids?.map((id) => id.toLowerCase()) ?? null,
    });
    const { status_reason: _reason, ...shown } = hook;
    res.status(created ? 201 : 200).json(shown);
  });

  router.get('/v1/hooks', ...auth, async (req, res) => {
    const { limit, cursor } = parseQuery(hookListQuery, req.query);
    const after = cursor === undefined ? undefined : decodeHookCursor(cursor) ?? undefined;
    const page = await services.hooks.page(principalOf(req).keyHash, { limit, after });
    res.setHeader('X-Total-Count', String(page.total));
    if (page.next) res.setHeader('Link', `<${nextPageUrl(req, services.config.PUBLIC_URL, encodeHookCursor(page.next))}>; rel="next"`);
    res.json(page.hooks);
  });

  router.get('/v1/hooks/:id', ...auth, async (req, res) => {
    res.json(await services.hooks.get(principalOf(req).keyHash, parseParams(hookParams, req.params).id));
  });

  router.delete('/v1/hooks/:id', ...auth, async (req, res) => {
    await services.hooks.delete(principalOf(req).keyHash, parseParams(hookParams, req.params).id);
    res.status(204).end();
  });

  router.get('/v1/hooks/:id/deliveries', ...auth, async (req, res) => {
    res.json(await services.hooks.attempts(principalOf(req).keyHash, parseParams(hookParams, req.params).id));
  });

  return router;
}

import express, { Router, type RequestHandler } from 'express';
import type { Services } from '../services.js';
import { authenticate, confirmDeviceKey, principalOf } from '../auth/authenticate.js';
import { AppError, validationError } from '../errors.js';
import { jsonPath } from '../dataset/import.js';
import { enrolKey } from '../triggers/device-triggers.js';
import { eventTypes } from '../triggers/transitions.js';
import { resolveTargetProblem } from '../webhooks/target-guard.js';
import { parseParams } from './query.js';
import { hookBody, hookParams } from './schemas.js';

/** CONTRACT 6.4: REST-hook subscriptions and their delivery log. */
export function hookRoutes(services: Services): Router {
  const router = Router();
  const withScope = (scope: 'hooks:write') =>
    authenticate({ headers: 'either', scope, verify: services.keys.device, attempts: services.failedAttempts });
  const auth: RequestHandler[] = [withScope('hooks:write'), confirmDeviceKey(services)];

  router.post('/v1/hooks', ...auth, express.json({ limit: '16kb' }), async (req, res) => {
    const principal = principalOf(req);
    // A hook delivers device data, so subscribing needs device:read as well.
    if (principal.scopes && !principal.scopes.has('device:read')) throw new AppError('invalid_scopes', 'Invalid scopes');
    const parsed = hookBody.safeParse(req.body ?? {});
    if (!parsed.success) {
      throw validationError(parsed.error.issues.map((i) => ({ path: jsonPath(i.path), message: i.message })));
    }
    const problem = await resolveTargetProblem(parsed.data.target_url, services.config.WEBHOOK_ALLOW_PRIVATE_TARGETS);
    if (problem) throw validationError([{ path: 'target_url', message: problem }]);
    await enrolKey(services.watches, services.poller, principal, false);
    const { hook, created } = services.hooks.create(principal.keyHash, {
      target_url: parsed.data.target_url,
      events: parsed.data.events ?? [...eventTypes],
      device_ids: parsed.data.device_ids?.map((id) => id.toLowerCase()) ?? null,
    });
    const { status_reason: _reason, ...shown } = hook;
    res.status(created ? 201 : 200).json(shown);
  });

  router.get('/v1/hooks', ...auth, (req, res) => {
    res.json(services.hooks.list(principalOf(req).keyHash));
  });

  router.get('/v1/hooks/:id', ...auth, (req, res) => {
    res.json(services.hooks.get(principalOf(req).keyHash, parseParams(hookParams, req.params).id));
  });

  router.delete('/v1/hooks/:id', ...auth, (req, res) => {
    services.hooks.delete(principalOf(req).keyHash, parseParams(hookParams, req.params).id);
    res.status(204).end();
  });

  router.get('/v1/hooks/:id/deliveries', ...auth, (req, res) => {
    res.json(services.hooks.attempts(principalOf(req).keyHash, parseParams(hookParams, req.params).id));
  });

  return router;
}

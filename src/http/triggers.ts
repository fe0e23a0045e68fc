import { Router, type RequestHandler, type Response } from 'express';
import type { Services } from '../services.js';
import { authenticate, confirmDeviceKey, principalOf } from '../auth/authenticate.js';
import { validationError } from '../errors.js';
import { enrolKey, sampleEvents } from '../triggers/device-triggers.js';
import { eventTypes, type EventType } from '../triggers/transitions.js';
import { QueryReader } from './query.js';

/** CONTRACT 6.3: the polling trigger, its samples, and the replayable event log. */
export function triggerRoutes(services: Services): Router {
  const router = Router();
  const authenticated = authenticate({ headers: 'either', scope: 'device:read', verify: services.keys.device, attempts: services.failedAttempts });
  // In upstream mode only the upstream knows whether a key is (still) good: ask it (cached)
  // before serving the connector's own state to the key.
  const auth: RequestHandler[] = [authenticated, confirmDeviceKey(services)];

  router.get('/v1/triggers/device-status', ...auth, async (req, res) => {
    const query = new QueryReader(req.query);
    const types = query.list('type', 2);
    const devices = query.list('devices', 1000)?.map((id) => id.toLowerCase());
    const limit = query.int('limit', 1, 500, 50);
    query.done();
    checkTypes(types);
    const principal = principalOf(req);
    await enrolKey(services.watches, services.poller, principal, true);
    sendStoredJson(res, services.eventLog.recent(principal.keyHash, { types: types as EventType[] | undefined, devices, limit }));
  });

  router.get('/v1/triggers/device-status/sample', ...auth, async (req, res) => {
    res.json(await sampleEvents(services.devices, principalOf(req), services.config.HEARTBEAT_TIMEOUT_MS));
  });

  router.get('/v1/events', ...auth, async (req, res) => {
    const query = new QueryReader(req.query);
    const after = query.string('after');
    const limit = query.int('limit', 1, 500, 100);
    query.done();
    sendStoredJson(res, services.eventLog.after(principalOf(req).keyHash, after, limit));
  });

  return router;
}

function checkTypes(types: string[] | undefined): void {
  const bad = types?.find((t) => !(eventTypes as readonly string[]).includes(t));
  if (bad !== undefined) {
    throw validationError([{ path: 'type', message: `type must be ${eventTypes.join(' or ')} (comma-separated)` }]);
  }
}

/** Events are stored as JSON text; the array is spliced, not re-serialised. */
function sendStoredJson(res: Response, payloads: string[]): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(`[${payloads.join(',')}]`);
}

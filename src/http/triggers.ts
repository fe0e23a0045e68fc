import { Router, type RequestHandler, type Response } from 'express';
import type { Services } from '../services.js';
import { authenticate, confirmDeviceKey, principalOf } from '../auth/authenticate.js';
import { enrolKey, sampleEvents } from '../triggers/device-triggers.js';
import { parseQuery } from './query.js';
import { eventsQuery, triggerQuery } from './schemas.js';

/** docs/triggers.md: the polling trigger, its samples, and the replayable event log. */
export function triggerRoutes(services: Services): Router {
  const router = Router();
  const authenticated = authenticate({ headers: 'either', scope: 'device:read', verify: services.keys.device, attempts: services.failedAttempts });
  // In upstream mode only the upstream knows whether a key is (still) good: ask it (cached)
  // before serving the connector's own state to the key.
  const auth: RequestHandler[] = [authenticated, confirmDeviceKey(services)];

  router.get('/v1/triggers/device-status', ...auth, async (req, res) => {
    const { type: types, devices: rawDevices, limit } = parseQuery(triggerQuery, req.query);
    const devices = rawDevices?.map((id) => id.toLowerCase());
    const principal = principalOf(req);
    await enrolKey(services.watches, services.poller, principal, true);
    sendStoredJson(res, await services.eventLog.recent(principal.keyHash, { types, devices, limit }));
  });

  router.get('/v1/triggers/device-status/sample', ...auth, async (req, res) => {
    res.json(await sampleEvents(services.devices, principalOf(req), services.config.HEARTBEAT_TIMEOUT_MS));
  });

  router.get('/v1/events', ...auth, async (req, res) => {
    const { after, limit } = parseQuery(eventsQuery, req.query);
    sendStoredJson(res, await services.eventLog.after(principalOf(req).keyHash, after, limit));
  });

  return router;
}

/** Events are stored as JSON text; the array is spliced, not re-serialised. */
function sendStoredJson(res: Response, payloads: string[]): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(`[${payloads.join(',')}]`);
}

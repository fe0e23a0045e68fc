import { Router } from 'express';
import type { Services } from '../services.js';
import { authenticate, principalOf } from '../auth/authenticate.js';
import type { Device } from '../sources/types.js';
import { QueryReader } from './query.js';

/** Seed 4.1 / CONTRACT 4: the device area, `Authorization: Bearer`, scope `device:read`. */
export function deviceRoutes(services: Services): Router {
  const router = Router();
  const auth = authenticate({
    headers: 'bearer',
    scope: 'device:read',
    verify: services.keys.device,
    attempts: services.failedAttempts,
  });

  router.get('/devices', auth, async (req, res) => {
    const query = new QueryReader(req.query);
    const isOnline = query.bool('is_online');
    const ids = query.list('ids', 1000)?.map((id) => id.toLowerCase());
    const page = query.int('page', 1, Number.MAX_SAFE_INTEGER, 1);
    const pageSize = query.int('page_size', 1, 1000, 100);
    query.done();
    const result = await services.devices.list(principalOf(req), { isOnline, ids, page, pageSize });
    res.json({ total: result.total, data: result.data.map(listForm) });
  });

  router.get('/devices/:id', auth, async (req, res) => {
    const device = await services.devices.get(principalOf(req), String(req.params.id));
    res.json({ ...device, id: device.id.toLowerCase() });
  });

  return router;
}

/** List output prints ids upper case (seed 2.1). */
function listForm(device: Device): Device {
  return { ...device, id: device.id.toUpperCase() };
}

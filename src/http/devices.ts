import { Router } from 'express';
import type { Services } from '../services.js';
import { authenticate, principalOf } from '../auth/authenticate.js';
import type { Device } from '../sources/types.js';
import { parseParams, parseQuery } from './query.js';
import { deviceListQuery, deviceParams } from './schemas.js';

/** docs/devices.md: the device area, `Authorization: Bearer`, scope `device:read`. */
export function deviceRoutes(services: Services): Router {
  const router = Router();
  const auth = authenticate({
    headers: 'bearer',
    scope: 'device:read',
    verify: services.keys.device,
    attempts: services.failedAttempts,
  });

  router.get('/devices', auth, async (req, res) => {
    const query = parseQuery(deviceListQuery, req.query);
    const ids = query.ids?.map((id) => id.toLowerCase());
    const result = await services.devices.list(principalOf(req), { isOnline: query.is_online, ids, page: query.page, pageSize: query.page_size });
    res.json({ total: result.total, data: result.data.map(listForm) });
  });

  router.get('/devices/:id', auth, async (req, res) => {
    const { id } = parseParams(deviceParams, req.params);
    const device = await services.devices.get(principalOf(req), id);
    res.json({ ...device, id: device.id.toLowerCase() });
  });

  return router;
}

/** List output prints ids upper case (docs/devices.md). */
function listForm(device: Device): Device {
  return { ...device, id: device.id.toUpperCase() };
}

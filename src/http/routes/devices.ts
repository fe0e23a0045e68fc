import { z } from 'zod';
import type { Device as DeviceRecord } from '../../sources/types.js';
import { boolParam, intParam, listParam } from '../query.js';
import { Device, DevicePage } from '../responses.js';
import { defineRoute, type RouteAuth } from '../route.js';

/** docs/devices.md: the device area, `Authorization: Bearer`, scope `device:read`. */
const auth = { keys: 'device', headers: 'bearer', scopes: ['device:read'] } as const satisfies RouteAuth;

const deviceListQuery = z.object({
  is_online: boolParam('is_online').optional().describe('`true`: only online devices; `false`: only offline devices.'),
  ids: listParam('ids', 1000).optional().describe('Device ids, comma-separated (the parameter may also repeat), trimmed, case-insensitive, at most 1000.'),
  page: intParam('page', 1, Number.MAX_SAFE_INTEGER).default(1).describe('Page number, from 1.'),
  page_size: intParam('page_size', 1, 1000).default(100).describe('Devices per page, 1 to 1000.'),
});

const deviceParams = z.object({
  id: z.string().describe('The device id (normally its MAC address), case-insensitive.'),
});

/** List output prints ids upper case (docs/devices.md). */
function listForm(device: DeviceRecord): DeviceRecord {
  return { ...device, id: device.id.toUpperCase() };
}

export const listDevices = defineRoute({
  method: 'get',
  path: '/devices',
  operationId: 'listDevices',
  tag: 'Devices',
  summary: 'List devices',
  description: 'The devices the key’s user may read, ordered by `registered_at`, then `id`. Ids are upper case. A page past the end has `data: []`.',
  auth,
  query: deviceListQuery,
  responses: { 200: { description: 'One page of devices.', schema: DevicePage } },
  async handler({ res, services, principal, query }) {
    const ids = query.ids?.map((id) => id.toLowerCase());
    const result = await services.devices.list(principal, { isOnline: query.is_online, ids, page: query.page, pageSize: query.page_size });
    res.json({ total: result.total, data: result.data.map(listForm) });
  },
});

export const getDevice = defineRoute({
  method: 'get',
  path: '/devices/{id}',
  operationId: 'getDevice',
  tag: 'Devices',
  summary: 'One device',
  description: 'The id matches case-insensitively; the answer’s id is lower case.',
  auth,
  params: deviceParams,
  responses: { 200: { description: 'The device.', schema: Device } },
  errors: { 404: '`Device not found`: absent, or the key’s user may not read it.' },
  async handler({ res, services, principal, params }) {
    const device = await services.devices.get(principal, params.id);
    res.json({ ...device, id: device.id.toLowerCase() });
  },
});

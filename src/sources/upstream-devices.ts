import type { CachedLoader } from '../cache/cached-loader.js';
import { numberedPages } from './all-devices.js';
import { callerOf, upstreamCall } from './upstream-call.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { KeyVerdicts } from '../upstream/key-verdicts.js';
import { deviceSchema, devicePageSchema } from '../upstream/schemas.js';
import { fastDevice, fastDevicePage } from '../upstream/fast-devices.js';
import type { Device, DevicePage, DeviceQuery, DeviceSource, Principal } from './types.js';

/**
 * Devices from an upstream serving the device interface (docs/upstream.md). The key is forwarded as Bearer; a 401 is
 * remembered by KeyVerdicts. With a cache, answers are kept per key hash and query.
 */
export function upstreamDeviceSource(client: UpstreamClient, verdicts: KeyVerdicts, cache?: CachedLoader): DeviceSource {
  const cached = upstreamCall(verdicts, cache);

  return {
    mode: 'upstream',
    list(principal: Principal, query: DeviceQuery): Promise<DevicePage> {
      const params = {
        is_online: query.isOnline === undefined ? undefined : String(query.isOnline),
        ids: query.ids?.join(','),
        page: String(query.page),
        page_size: String(query.pageSize),
      };
      return cached(principal, `devices?${new URLSearchParams(clean(params))}`, () =>
        client.get({ path: '/devices', query: params, key: principal.key, ...callerOf(principal), schema: devicePageSchema, fast: fastDevicePage }),
      );
    },
    pages(principal: Principal, pageSize: number): AsyncIterable<Device[]> {
      return numberedPages((query) => this.list(principal, query), pageSize);
    },
    get(principal: Principal, id: string): Promise<Device> {
      const lower = id.toLowerCase();
      return cached(principal, `device/${lower}`, () =>
        client.get({ path: '/devices/:id', params: { id: lower }, key: principal.key, ...callerOf(principal), schema: deviceSchema, fast: fastDevice }),
      );
    },
  };
}

function clean(params: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(params).filter((e): e is [string, string] => e[1] !== undefined));
}

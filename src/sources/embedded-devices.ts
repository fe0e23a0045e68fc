import type { Db } from '../db/database.js';
import type { DeviceRow } from '../db/tables.js';
import { AppError } from '../errors.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import type { Device, DevicePage, DeviceQuery, DeviceSource, Principal } from './types.js';

/**
 * Devices from the embedded catalog. A key sees the devices its user has `read` or `update`
 * access to (docs/api.md); everything else is absent. `is_online` is computed at read time.
 */
export function embeddedDeviceSource(db: Db, clock: Clock, heartbeatTimeoutMs: number): DeviceSource {
  /** Heartbeats strictly after this instant are "less than the timeout old". */
  const onlineSince = (): string => formatMicros((clock.now() - heartbeatTimeoutMs) * 1000);

  const toDevice = (row: DeviceRow, threshold: string): Device => ({
    id: row.id,
    name: row.name,
    timezone: row.timezone,
    screen_resolution: row.screen_resolution,
    screen_orientation: row.screen_orientation,
    registered_at: row.registered_at,
    published_at: row.published_at,
    last_heartbeat_at: row.last_heartbeat_at,
    is_online: row.last_heartbeat_at !== null && row.last_heartbeat_at > threshold,
    offline_startup: row.offline_startup === 1,
    offline_startup_delay_minutes: row.offline_startup_delay_minutes,
    open_dev_tools: row.open_dev_tools === 1,
    display_connected: row.display_connected === 1,
    connection_type: row.connection_type,
    wifi_ssid: row.wifi_ssid,
    wifi_signal_strength: row.wifi_signal_strength,
    updated_at: row.updated_at,
    created_at: row.created_at,
  });

  /** The devices a user may read: joined through their access rows. */
  const visible = (userId: string | null) =>
    db.kysely
      .selectFrom('devices as d')
      .innerJoin('device_access as a', (join) => join.onRef('a.device_id', '=', 'd.id').on('a.user_id', '=', userId ?? ''));

  return {
    mode: 'embedded',
    async list(principal: Principal, query: DeviceQuery): Promise<DevicePage> {
      const threshold = onlineSince();
      const matching = visible(principal.userId)
        .$if(query.ids !== undefined, (q) => q.where('d.id', 'in', query.ids!))
        .$if(query.isOnline === true, (q) => q.where('d.last_heartbeat_at', '>', threshold))
        .$if(query.isOnline === false, (q) =>
          q.where((eb) => eb.or([eb('d.last_heartbeat_at', 'is', null), eb('d.last_heartbeat_at', '<=', threshold)])),
        );
      const counted = await matching.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow();
      const rows = await matching
        .selectAll('d')
        .orderBy('d.registered_at')
        .orderBy('d.id')
        .limit(query.pageSize)
        .offset((query.page - 1) * query.pageSize)
        .execute();
      return { total: Number(counted.total), data: rows.map((row) => toDevice(row, threshold)) };
    },

    async get(principal: Principal, id: string): Promise<Device> {
      const row = await visible(principal.userId).selectAll('d').where('d.id', '=', id.toLowerCase()).executeTakeFirst();
      if (!row) throw new AppError('not_found', 'Device not found');
      return toDevice(row, onlineSince());
    },
  };
}

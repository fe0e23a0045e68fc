import type { Db } from '../db/database.js';
import { AppError } from '../errors.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import type { Device, DevicePage, DeviceQuery, DeviceSource, Principal } from './types.js';

interface DeviceRow {
  id: string;
  name: string;
  timezone: string;
  screen_resolution: string;
  screen_orientation: string;
  registered_at: string;
  published_at: string | null;
  last_heartbeat_at: string | null;
  offline_startup: number;
  offline_startup_delay_minutes: number;
  open_dev_tools: number;
  display_connected: number;
  connection_type: string;
  wifi_ssid: string | null;
  wifi_signal_strength: number | null;
  updated_at: string;
  created_at: string;
}

const columns = `d.id, d.name, d.timezone, d.screen_resolution, d.screen_orientation, d.registered_at, d.published_at,
  d.last_heartbeat_at, d.offline_startup, d.offline_startup_delay_minutes, d.open_dev_tools, d.display_connected,
  d.connection_type, d.wifi_ssid, d.wifi_signal_strength, d.updated_at, d.created_at`;

/**
 * Devices from the embedded catalog. A key sees the devices its user has `read` or `update`
 * access to (seed 5); everything else is absent. `is_online` is computed at read time.
 */
export function embeddedDeviceSource(db: Db, clock: Clock, heartbeatTimeoutMs: number): DeviceSource {
  const one = db.prepare(`SELECT ${columns} FROM devices d
    JOIN device_access a ON a.device_id = d.id AND a.user_id = ? WHERE d.id = ?`);

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

  return {
    mode: 'embedded',
    async list(principal: Principal, query: DeviceQuery): Promise<DevicePage> {
      const threshold = onlineSince();
      const where: string[] = [];
      const params: Record<string, unknown> = { user: principal.userId, threshold };
      if (query.ids) {
        where.push('d.id IN (SELECT value FROM json_each(@ids))');
        params.ids = JSON.stringify(query.ids);
      }
      if (query.isOnline === true) where.push('d.last_heartbeat_at > @threshold');
      if (query.isOnline === false) where.push('(d.last_heartbeat_at IS NULL OR d.last_heartbeat_at <= @threshold)');
      const from = `FROM devices d JOIN device_access a ON a.device_id = d.id AND a.user_id = @user
        ${where.length ? `WHERE ${where.join(' AND ')}` : ''}`;
      const { total } = db.prepare(`SELECT count(*) AS total ${from}`).get(params) as { total: number };
      const rows = db
        .prepare(`SELECT ${columns} ${from} ORDER BY d.registered_at, d.id LIMIT @limit OFFSET @offset`)
        .all({ ...params, limit: query.pageSize, offset: (query.page - 1) * query.pageSize }) as DeviceRow[];
      return { total, data: rows.map((row) => toDevice(row, threshold)) };
    },

    async get(principal: Principal, id: string): Promise<Device> {
      const row = one.get(principal.userId, id.toLowerCase()) as DeviceRow | undefined;
      if (!row) throw new AppError('not_found', 'Device not found');
      return toDevice(row, onlineSince());
    },
  };
}

import { hashKey } from '../../src/auth/keys.js';
import type { Principal } from '../../src/sources/types.js';
import { chunks } from '../../src/db/chunks.js';
import type { Db } from '../../src/db/database.js';
import { formatMicros } from '../../src/time/timestamps.js';

/**
 * A generated device dataset (docs/datasets.md shape) for the poller and webhook rows: one account,
 * one user, one key (`device:read`, `hooks:write`) and `count` devices the user can read, all
 * online (heartbeat `now-30s`). Deterministic ids (`02:be:00:00:00:00` …, lower case) and
 * distinct `registered_at`, so paging order is stable.
 */

export const deviceBenchKey = 'sk_bench_devices_0123456789abcdef';
export const deviceBenchUser = 'usr_bench_devices';

export function benchDeviceId(index: number): string {
  const hex = index.toString(16).padStart(8, '0');
  return `02:be:${hex.slice(0, 2)}:${hex.slice(2, 4)}:${hex.slice(4, 6)}:${hex.slice(6, 8)}`;
}

const registeredBase = Date.UTC(2025, 0, 1) * 1000;

/** One generated device of the dataset format, online (heartbeat `now-30s`), readable by `userId`. */
export function benchDeviceRecord(id: string, name: string, index: number, userId: string) {
  const registered = formatMicros(registeredBase + index * 1_000_000);
  const wifi = index % 2 === 0;
  return {
    id,
    name,
    timezone: 'America/Chicago',
    screen_resolution: index % 3 === 0 ? '1080x1920' : '1920x1080',
    screen_orientation: 'normal',
    registered_at: registered,
    published_at: 'now-2h',
    last_heartbeat_at: 'now-30s',
    offline_startup: false,
    offline_startup_delay_minutes: 0,
    open_dev_tools: false,
    display_connected: true,
    connection_type: wifi ? 'wifi' : 'ethernet',
    wifi_ssid: wifi ? 'BenchStaff' : null,
    wifi_signal_strength: wifi ? -50 - (index % 30) : null,
    updated_at: 'now-1h',
    created_at: registered,
    access: [{ user_id: userId, level: 'read' }],
  };
}

export function deviceDataset(count: number): unknown {
  const devices = Array.from({ length: count }, (_, i) => benchDeviceRecord(benchDeviceId(i), `Screen ${i + 1}`, i, deviceBenchUser));
  return {
    accounts: [{ id: 'acc_bench_devices', name: 'Bench Screens' }],
    users: [{ id: deviceBenchUser, account_id: 'acc_bench_devices', name: 'Bench Screens User' }],
    api_keys: [{ id: 'key_bench_devices', user_id: deviceBenchUser, name: 'Bench devices', scopes: ['device:read', 'hooks:write'], key: deviceBenchKey }],
    devices,
    menus: [],
  };
}

/** The principal the trigger route would build for the key: upstream mode (scopes unknown) or embedded. */
export function benchPrincipal(mode: 'upstream' | 'embedded', requestId?: string): Principal {
  return {
    keyHash: hashKey(deviceBenchKey),
    key: deviceBenchKey,
    scopes: mode === 'upstream' ? null : new Set(['device:read', 'hooks:write']),
    keyId: mode === 'upstream' ? null : 'key_bench_devices',
    keyName: mode === 'upstream' ? null : 'Bench devices',
    userId: mode === 'upstream' ? null : deviceBenchUser,
    accountId: mode === 'upstream' ? null : 'acc_bench_devices',
    accountName: mode === 'upstream' ? null : 'Bench Screens',
    requestId,
  };
}

/** `UPDATE devices SET last_heartbeat_at` for a list of ids, in one transaction. */
export async function setHeartbeats(db: Db, ids: readonly string[], heartbeatMicros: number): Promise<number> {
  const iso = formatMicros(Math.round(heartbeatMicros));
  let changed = 0;
  for (const part of chunks(ids)) {
    const result = await db.kysely.updateTable('devices').set({ last_heartbeat_at: iso }).where('id', 'in', part).executeTakeFirst();
    changed += Number(result.numUpdatedRows);
  }
  return changed;
}

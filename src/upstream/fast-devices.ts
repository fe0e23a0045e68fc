import { canonicalIso } from '../time/timestamps.js';
import type { Device } from '../catalog/device.js';
import type { DevicePage } from '../catalog/source-queries.js';

/**
 * Hand-checked parses of the device answers (`GET /devices`, `GET /devices/{id}`) for the
 * common case: every record exactly as the interface says. A poll of 100 devices checked this
 * way costs a tenth of the schema's parse (devicePageSchema, schemas.ts). Each answers undefined
 * as soon as anything is off (a type, a missing field, a timestamp not in the canonical
 * six-digit form, an integer past 2^53), and the schema then parses the answer as before,
 * leaving out and reporting the records that do not match. What they return is what the schema
 * returns for the same answer, field for field and in the same order
 * (test/unit/fast-devices.test.ts checks them against it).
 */

type Raw = Record<string, unknown>;

const isRecord = (v: unknown): v is Raw => typeof v === 'object' && v !== null && !Array.isArray(v);
const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);

/** A timestamp the schema keeps as it is (already canonical), or undefined. */
function stamp(v: unknown): string | undefined {
  return typeof v === 'string' && canonicalIso(v) === v ? v : undefined;
}

function nullableStamp(v: unknown): string | null | undefined {
  return v === null ? null : stamp(v);
}

/** One device record, or undefined when the schema must judge it. */
export function fastDevice(raw: unknown): Device | undefined {
  if (!isRecord(raw)) return undefined;
  const r = raw;
  const { id, name, timezone, screen_resolution, screen_orientation, connection_type } = r;
  if (typeof id !== 'string' || id.length === 0) return undefined;
  if (typeof name !== 'string' || typeof timezone !== 'string' || typeof screen_resolution !== 'string') return undefined;
  if (typeof screen_orientation !== 'string' || typeof connection_type !== 'string') return undefined;
  const registered_at = stamp(r.registered_at);
  const published_at = nullableStamp(r.published_at);
  const last_heartbeat_at = nullableStamp(r.last_heartbeat_at);
  const updated_at = stamp(r.updated_at);
  const created_at = stamp(r.created_at);
  if (registered_at === undefined || published_at === undefined || last_heartbeat_at === undefined) return undefined;
  if (updated_at === undefined || created_at === undefined) return undefined;
  const { is_online, offline_startup, open_dev_tools, display_connected } = r;
  if (typeof is_online !== 'boolean' || typeof offline_startup !== 'boolean') return undefined;
  if (typeof open_dev_tools !== 'boolean' || typeof display_connected !== 'boolean') return undefined;
  const { offline_startup_delay_minutes, wifi_ssid, wifi_signal_strength } = r;
  if (!isInt(offline_startup_delay_minutes)) return undefined;
  if (wifi_ssid !== null && typeof wifi_ssid !== 'string') return undefined;
  if (wifi_signal_strength !== null && !isInt(wifi_signal_strength)) return undefined;
  // The schema's order of fields (an event's payload is this object as JSON).
  return {
    id: id.toLowerCase(),
    name,
    timezone,
    screen_resolution,
    screen_orientation,
    registered_at,
    published_at,
    last_heartbeat_at,
    is_online,
    offline_startup,
    offline_startup_delay_minutes,
    open_dev_tools,
    display_connected,
    connection_type,
    wifi_ssid,
    wifi_signal_strength,
    updated_at,
    created_at,
  };
}

/** A page of devices every one of which is valid, or undefined when the schema must judge it. */
export function fastDevicePage(raw: unknown): DevicePage | undefined {
  if (!isRecord(raw)) return undefined;
  const { total, data } = raw;
  if (!isInt(total) || total < 0 || !Array.isArray(data)) return undefined;
  const devices: Device[] = new Array<Device>(data.length);
  for (let i = 0; i < data.length; i += 1) {
    const device = fastDevice(data[i]);
    if (device === undefined) return undefined;
    devices[i] = device;
  }
  return { total, data: devices };
}

import { AppError } from '../errors.js';
import { formatMicros, parseIso } from '../time/timestamps.js';
import type { DeviceSource, Principal } from '../sources/types.js';
import type { DeviceStatusPoller } from './poller.js';
import { eventId, type DeviceEvent } from './transitions.js';
import type { WatchStore } from './watches.js';

/**
 * Enrols a key for watching and, the first time, records its baseline right away, so the
 * next change after a platform subscribes is caught. A key the source refuses is not kept.
 */
export async function enrolKey(watches: WatchStore, poller: DeviceStatusPoller, principal: Principal, viaTrigger: boolean): Promise<void> {
  // A watch paused because its key was refused is re-checked with the source right away (enrol
  // resumes it first, so hooks get what the re-check finds): a key the upstream still rejects
  // is paused again and gets that 401 relayed, not the local event log (CONTRACT 2 "the upstream
  // decides", 6.4 paused hooks).
  const wasPaused = (watches.get(principal.keyHash)?.paused_reason ?? null) !== null;
  const { watch, created } = watches.enrol(principal, viaTrigger);
  if (watch.baseline_at !== null && !wasPaused) return;
  try {
    // The baseline / re-check is made for this request, so it carries its X-Request-Id (CONTRACT 2).
    await poller.pollKey(watch, principal.requestId);
  } catch (err) {
    if (created && err instanceof AppError && (err.code === 'invalid_key' || err.code === 'invalid_scopes')) {
      watches.remove(principal.keyHash);
    }
    throw err;
  }
}

const cannedDevice = {
  id: 'a4:83:e7:00:00:01',
  name: 'Sample screen',
  timezone: 'America/Chicago',
  screen_resolution: '1920x1080',
  screen_orientation: 'normal',
  registered_at: '2025-01-10T09:00:00.123456Z',
  published_at: '2025-06-01T08:00:00.000000Z',
  last_heartbeat_at: '2025-06-01T12:00:00.000000Z',
  is_online: false,
  offline_startup: false,
  offline_startup_delay_minutes: 0,
  open_dev_tools: false,
  display_connected: true,
  connection_type: 'wifi',
  wifi_ssid: 'Sample',
  wifi_signal_strength: -60,
  updated_at: '2025-06-01T12:00:00.000000Z',
  created_at: '2025-01-10T09:00:00.123456Z',
};

/**
 * Sample events for a platform's set-up screen, built from up to three of the key's own
 * devices (a canned device when it has none), each marked `"sample": true`.
 */
export async function sampleEvents(devices: DeviceSource, principal: Principal, timeoutMs: number): Promise<Array<DeviceEvent & { sample: true }>> {
  const page = await devices.list(principal, { page: 1, pageSize: 3 });
  const list = page.data.length > 0 ? page.data : [cannedDevice];
  return list.map((raw) => {
    const device = { ...raw, id: raw.id.toLowerCase() };
    const online = device.is_online;
    const type = online ? 'device.online' : 'device.offline';
    const heartbeat = device.last_heartbeat_at;
    const hb = heartbeat === null ? null : parseIso(heartbeat);
    const occurred = online || hb === null ? heartbeat ?? device.updated_at : formatMicros(hb + timeoutMs * 1000);
    return {
      id: `${eventId(device.id, type, heartbeat)}_sample`,
      type,
      occurred_at: occurred,
      device,
      previous_status: online ? 'offline' : 'online',
      status: online ? 'online' : 'offline',
      sample: true,
    };
  });
}

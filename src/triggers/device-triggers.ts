import { randomUUID } from 'node:crypto';
import { AppError } from '../errors.js';
import { formatMicros, parseIso } from '../time/timestamps.js';
import type { Device, DeviceSource, Principal } from '../sources/types.js';
import type { DeviceStatusPoller } from './poller.js';
import { eventId, eventTypes, type DeviceEvent, type EventType } from './transitions.js';
import type { WatchStore } from './watches.js';
import { outsideDeadline, type RequestWaits } from '../db/wait-budget.js';

/**
 * Enrols a key for watching and, the first time, records its baseline right away, so the
 * next change after a platform subscribes is caught. A key the source refuses is not kept.
 */
export async function enrolKey(
  watches: WatchStore,
  poller: DeviceStatusPoller,
  principal: Principal,
  viaTrigger: boolean,
  /** The request's database waits: the poll does not spend their deadline (db/wait-budget.ts). */
  waits?: RequestWaits,
): Promise<void> {
  // A watch paused because its key was refused is re-checked with the source right away (enrol
  // resumes it first, so hooks get what the re-check finds): a key the upstream still rejects
  // is paused again and gets that 401 relayed, not the local event log (docs/api.md "the upstream
  // decides", paused hooks in docs/webhooks.md). The request leases the key for its poll, so no
  // background poll of it runs beside this one.
  const { watch, created, pollNow } = await watches.enrol(principal, viaTrigger, poller.requestLease);
  if (!pollNow) return;
  try {
    // The baseline / re-check is made for this request, so it carries its X-Request-Id (docs/api.md).
    // It is a poll, however long the key's listing: the poller's own database, so each of its
    // waits is bounded on its own, not by what is left of the request's deadline, and the time
    // it takes does not count against that deadline either (db/wait-budget.ts, outsideDeadline).
    await outsideDeadline(waits, () => poller.pollForRequest(watch, principal.requestId ?? randomUUID()));
  } catch (err) {
    if (created && err instanceof AppError && (err.code === 'invalid_key' || err.code === 'invalid_scopes')) {
      await watches.remove(principal.keyHash);
    }
    throw err;
  }
}

const cannedDevice: Device = {
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

type SampleEvent = DeviceEvent & { sample: true };

/**
 * Sample events for a platform's set-up screen, built from up to three of the key's own
 * devices (a canned device when it has none), each marked `"sample": true`. Each device gives
 * the event of its current state; then every type still missing is added from the first
 * device, so there is always at least one `device.offline` and one `device.online` sample
 * (a platform's "came back online" trigger loads one even when every screen is offline).
 */
export async function sampleEvents(devices: DeviceSource, principal: Principal, timeoutMs: number): Promise<SampleEvent[]> {
  const page = await devices.list(principal, { page: 1, pageSize: 3 });
  const list: Device[] = page.data.length > 0 ? page.data : [cannedDevice];
  const samples = list.map((device) => sampleEvent(device, device.is_online ? 'device.online' : 'device.offline', timeoutMs));
  for (const type of eventTypes) {
    if (!samples.some((sample) => sample.type === type)) samples.push(sampleEvent(list[0]!, type, timeoutMs));
  }
  return samples;
}

/**
 * One sample of `type` for a device, its state shown as the event would leave it: online at
 * its last heartbeat (or, never seen, at its last update), or offline one timeout after it.
 */
function sampleEvent(raw: Device, type: EventType, timeoutMs: number): SampleEvent {
  const online = type === 'device.online';
  const heartbeat = raw.last_heartbeat_at ?? (online ? raw.updated_at : null);
  const device = { ...raw, id: raw.id.toLowerCase(), is_online: online, last_heartbeat_at: heartbeat };
  const micros = heartbeat === null ? null : parseIso(heartbeat);
  const occurred = online || micros === null ? (heartbeat ?? device.updated_at) : formatMicros(micros + timeoutMs * 1000);
  return {
    id: `${eventId(device.id, type, heartbeat)}_sample`,
    type,
    occurred_at: occurred,
    device,
    previous_status: online ? 'offline' : 'online',
    status: online ? 'online' : 'offline',
    sample: true,
  };
}

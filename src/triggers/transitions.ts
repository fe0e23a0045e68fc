import { createHash } from 'node:crypto';
import type { Device, DeviceState } from '../catalog/device.js';
import type { DeviceEvent, DeviceStatus, EventType } from '../catalog/event.js';
import { formatMicros, parseIso } from '../time/timestamps.js';

export { eventTypes, type DeviceEvent, type DeviceStatus, type EventType } from '../catalog/event.js';

/** An event whose `device` is what it was decided from (a whole Device, or just its state). */
export type TransitionOf<D extends DeviceState> = Omit<DeviceEvent, 'device'> & { device: D };

/** What the poller remembers of a device between polls. */
export interface Snapshot {
  status: DeviceStatus;
  last_heartbeat_at: string | null;
  /** The id of the device's last event (the next one's id chains on it); absent or null before its first. */
  last_event_id?: string | null;
  /** That event's `occurred_at`: the next one's never precedes it. */
  last_event_at?: string | null;
  /** The device was left out of the listings since (docs/triggers.md): its row is what was last known of it. */
  missing?: boolean;
}

/**
 * How far ahead of the poll's time a heartbeat may be before it is taken for a wrong clock: two
 * hosts' clocks disagree by less than this, and a heartbeat that far ahead cannot be real.
 */
export const futureHeartbeatToleranceMs = 60_000;

/**
 * Deterministic: the same device, type, heartbeat and previous event give the same id, so
 * replicas and restarts never mint a second id for one transition (they decide it from the same
 * snapshot row), while a second transition with the same heartbeat (a status flapping while the
 * heartbeat stays) gets an id of its own. A device's first event (no previous one known) keeps
 * the id of device, type and heartbeat alone.
 */
export function eventId(deviceId: string, type: EventType, heartbeat: string | null, previousEventId?: string | null): string {
  const chain = previousEventId ? `|${previousEventId}` : '';
  const digest = createHash('sha256')
    .update(`${deviceId.toLowerCase()}|${type}|${heartbeat ?? 'never'}${chain}`)
    .digest('hex');
  return `evt_${digest.slice(0, 32)}`;
}

/** What one comparison found besides its events: devices whose heartbeat was in the future. */
export interface Transitions<D> {
  events: Array<TransitionOf<D & DeviceState>>;
  snapshot: Map<string, Snapshot>;
  /** Transitions decided from a heartbeat later than the poll's time (past the tolerance), taken as the poll's time. */
  future: Array<{ id: string; heartbeat: string }>;
}

/**
 * The pure diff between the last snapshot and the devices seen now. Devices new to the
 * snapshot are recorded without an event (their first sighting is their baseline).
 * `occurred_at`: offline = last heartbeat + timeout (now, if it never sent one); online = the
 * heartbeat that ended the gap. A heartbeat more than the tolerance ahead of `nowMs` (the
 * poll's time) is taken as `nowMs`, and the event's `occurred_at` is `nowMs`; for one device
 * `occurred_at` never precedes that of its previous event.
 */
export function detectTransitions(
  previous: ReadonlyMap<string, Snapshot>,
  devices: readonly Device[],
  heartbeatTimeoutMs: number,
  nowMs: number,
): { events: DeviceEvent[]; snapshot: Map<string, Snapshot>; future: Array<{ id: string; heartbeat: string }> };
export function detectTransitions<D extends DeviceState>(
  previous: ReadonlyMap<string, Snapshot>,
  devices: readonly D[],
  heartbeatTimeoutMs: number,
  nowMs: number,
): Transitions<D>;
export function detectTransitions<D extends DeviceState>(
  previous: ReadonlyMap<string, Snapshot>,
  devices: readonly D[],
  heartbeatTimeoutMs: number,
  nowMs: number,
): Transitions<D> {
  const events: Array<TransitionOf<D>> = [];
  const snapshot = new Map<string, Snapshot>();
  const future: Array<{ id: string; heartbeat: string }> = [];
  for (const raw of devices) {
    const id = raw.id.toLowerCase();
    const status: DeviceStatus = raw.is_online ? 'online' : 'offline';
    const before = previous.get(id);
    const row: Snapshot = { status, last_heartbeat_at: raw.last_heartbeat_at };
    if (before?.last_event_id != null) Object.assign(row, { last_event_id: before.last_event_id, last_event_at: before.last_event_at ?? null });
    snapshot.set(id, row);
    if (!before || before.status === status) continue;
    const device = { ...raw, id };
    const type: EventType = status === 'offline' ? 'device.offline' : 'device.online';
    const heartbeat = device.last_heartbeat_at;
    const hbMicros = heartbeat === null ? null : parseIso(heartbeat);
    const nowMicros = nowMs * 1000;
    const ahead = hbMicros !== null && hbMicros > nowMicros + futureHeartbeatToleranceMs * 1000;
    if (ahead) future.push({ id, heartbeat: heartbeat! });
    let occurred = hbMicros === null || ahead ? formatMicros(nowMicros) : status === 'online' ? heartbeat! : formatMicros(hbMicros + heartbeatTimeoutMs * 1000);
    // Fixed-width timestamps compare as text: a device's events never go back in time.
    if (before.last_event_at && occurred < before.last_event_at) occurred = before.last_event_at;
    const event = {
      id: eventId(device.id, type, heartbeat, before.last_event_id),
      type,
      occurred_at: occurred,
      device,
      previous_status: before.status,
      status,
    };
    events.push(event);
    Object.assign(row, { last_event_id: event.id, last_event_at: occurred });
  }
  return { events, snapshot, future };
}

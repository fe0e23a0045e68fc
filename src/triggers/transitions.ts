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
}

/**
 * Deterministic: the same device, type and heartbeat give the same id, so replicas and
 * restarts never mint a second id for one transition.
 */
export function eventId(deviceId: string, type: EventType, heartbeat: string | null): string {
  const digest = createHash('sha256').update(`${deviceId.toLowerCase()}|${type}|${heartbeat ?? 'never'}`).digest('hex');
  return `evt_${digest.slice(0, 32)}`;
}

/**
 * The pure diff between the last snapshot and the devices seen now. Devices new to the
 * snapshot are recorded without an event (their first sighting is their baseline); devices
 * that disappeared are dropped from the snapshot silently.
 * `occurred_at`: offline = last heartbeat + timeout (now, if it never sent one); online = the
 * heartbeat that ended the gap.
 */
export function detectTransitions(
  previous: ReadonlyMap<string, Snapshot>,
  devices: readonly Device[],
  heartbeatTimeoutMs: number,
  nowMs: number,
): { events: DeviceEvent[]; snapshot: Map<string, Snapshot> };
export function detectTransitions<D extends DeviceState>(
  previous: ReadonlyMap<string, Snapshot>,
  devices: readonly D[],
  heartbeatTimeoutMs: number,
  nowMs: number,
): { events: Array<TransitionOf<D>>; snapshot: Map<string, Snapshot> };
export function detectTransitions<D extends DeviceState>(
  previous: ReadonlyMap<string, Snapshot>,
  devices: readonly D[],
  heartbeatTimeoutMs: number,
  nowMs: number,
): { events: Array<TransitionOf<D>>; snapshot: Map<string, Snapshot> } {
  const events: Array<TransitionOf<D>> = [];
  const snapshot = new Map<string, Snapshot>();
  for (const raw of devices) {
    const id = raw.id.toLowerCase();
    const status: DeviceStatus = raw.is_online ? 'online' : 'offline';
    snapshot.set(id, { status, last_heartbeat_at: raw.last_heartbeat_at });
    const before = previous.get(id);
    if (!before || before.status === status) continue;
    const device = { ...raw, id };
    const type: EventType = status === 'offline' ? 'device.offline' : 'device.online';
    const heartbeat = device.last_heartbeat_at;
    const hbMicros = heartbeat === null ? null : parseIso(heartbeat);
    const occurred =
      status === 'online' || hbMicros === null
        ? heartbeat ?? formatMicros(nowMs * 1000)
        : formatMicros(hbMicros + heartbeatTimeoutMs * 1000);
    events.push({ id: eventId(device.id, type, heartbeat), type, occurred_at: occurred, device, previous_status: before.status, status });
  }
  return { events, snapshot };
}

/**
 * Devices the source lists but could not read this poll (an invalid upstream record,
 * docs/upstream.md) keep what the last snapshot knew of them: they are neither gone (which
 * would drop them, and make their next valid record a silent new baseline) nor changed (an
 * invalid record is never an event). Their next valid record is compared with that.
 */
export function keepUnreadable(previous: ReadonlyMap<string, Snapshot>, snapshot: Map<string, Snapshot>, unreadable: Iterable<string>): void {
  for (const id of unreadable) {
    const before = previous.get(id);
    if (before && !snapshot.has(id)) snapshot.set(id, before);
  }
}

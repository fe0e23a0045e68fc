import { z } from 'zod';
import { Device } from './device.js';
import { component, timestamp } from './registry.js';

/** Device-status events (docs/triggers.md). */

export type DeviceStatus = 'online' | 'offline';
export type EventType = 'device.offline' | 'device.online';
export const eventTypes: readonly EventType[] = ['device.offline', 'device.online'];
export const eventTypeTuple = eventTypes as unknown as readonly [EventType, ...EventType[]];

const status = z.enum(['online', 'offline']);

export const Event = component(
  'Event',
  z.strictObject({
    id: z.string().describe("Deterministic: the same device, type, heartbeat and previous event give the same id (docs/triggers.md)."),
    type: z.enum(eventTypeTuple),
    occurred_at: timestamp.describe("Offline: last heartbeat + timeout. Online: the heartbeat that ended the gap. Never before the device's previous event; a heartbeat in the future counts as the poll's time."),
    device: Device,
    previous_status: status,
    status,
  }),
);

export const EventList = component('EventList', z.array(Event));

export const SampleEventList = component(
  'SampleEventList',
  z.array(Event.extend({ sample: z.literal(true) })).describe("Sample events built from the key's own devices."),
);

/** A device-status event: what triggers emit and webhooks deliver as `data`. */
export type DeviceEvent = z.infer<typeof Event>;

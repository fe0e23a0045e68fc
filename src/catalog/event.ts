import { z } from 'zod';
import { Device } from './device.js';
import { component, timestamp } from './registry.js';

/** Device-status events (docs/triggers.md). */

export type DeviceStatus = 'online' | 'offline';
export type EventType = 'device.offline' | 'device.online';
export const eventTypes: readonly EventType[] = ['device.offline', 'device.online'];
export const eventTypeTuple = eventTypes as unknown as readonly [EventType, ...EventType[]];

/**
 * Operational events (docs/webhooks.md, "Operational events"): what happened to a hook or a
 * delivery, logged in the key's event log and delivered to the key's other hooks that list
 * them. Never in a hook's default set, never in the polling trigger.
 */
export type OperationalEventType = 'hook.disabled' | 'delivery.dead';
export const operationalEventTypes: readonly OperationalEventType[] = ['hook.disabled', 'delivery.dead'];
/** What a hook may list in `events`. */
export type HookEventType = EventType | OperationalEventType;
export const hookEventTypes: readonly HookEventType[] = [...eventTypes, ...operationalEventTypes];
export const hookEventTypeTuple = hookEventTypes as unknown as readonly [HookEventType, ...HookEventType[]];

const status = z.enum(['online', 'offline']);

export const Event = component(
  'Event',
  z.strictObject({
    id: z.string().describe('Deterministic: the same device, type, heartbeat and previous event give the same id (docs/triggers.md).'),
    type: z.enum(eventTypeTuple),
    occurred_at: timestamp.describe(
      "Offline: last heartbeat + timeout. Online: the heartbeat that ended the gap. Never before the device's previous event; a heartbeat in the future counts as the poll's time.",
    ),
    device: Device,
    previous_status: status,
    status,
  }),
);

export const EventList = component('EventList', z.array(Event));

export const OperationalEvent = component(
  'OperationalEvent',
  z.strictObject({
    id: z.string().describe('Deterministic: the same hook, delivery and attempt give the same id.'),
    type: z.enum(['hook.disabled', 'delivery.dead']),
    occurred_at: timestamp.describe('When the hook was disabled, or the delivery\u2019s last attempt ended.'),
    data: z.strictObject({
      hook_id: z.string().describe('The hook it tells of (never delivered to that hook itself).'),
      target_url: z.string(),
      reason: z.string(),
      delivery_id: z.string().optional().describe('`delivery.dead` only.'),
      event_id: z.string().optional().describe('`delivery.dead` only: the event that was not delivered.'),
    }),
  }),
);

export const EventLogList = component(
  'EventLogList',
  z.array(z.union([Event, OperationalEvent])).describe('Device-status events, or the operational events named in `type`.'),
);

export const SampleEventList = component(
  'SampleEventList',
  z.array(Event.extend({ sample: z.literal(true) })).describe("Sample events built from the key's own devices."),
);

/** A device-status event: what triggers emit and webhooks deliver as `data`. */
export type DeviceEvent = z.infer<typeof Event>;

import type { Response } from 'express';
import { z } from 'zod';
import { waitsOf } from '../../db/wait-budget.js';
import { enrolKey, sampleEvents } from '../../triggers/device-triggers.js';
import { eventTypes, type EventType } from '../../triggers/transitions.js';
import { hookEventTypes, hookEventTypeTuple } from '../../catalog/event.js';
import { intParam, listParam, scalarParam } from '../query.js';
import { EventList, SampleEventList } from '../responses.js';
import { EventLogList } from '../../catalog/event.js';
import { defineRoute, type RouteAuth } from '../route.js';

/**
 * docs/triggers.md: the polling trigger, its samples, and the replayable event log. In upstream
 * mode only the upstream knows whether a key is (still) good: it is asked (cached) before the
 * connector serves its own state to the key.
 */
const auth = { keys: 'device', headers: 'either', scopes: ['device:read'], confirmDeviceKey: true } as const satisfies RouteAuth;

const eventTypeTuple = eventTypes as unknown as readonly [EventType, ...EventType[]];

const triggerQuery = z.object({
  type: listParam('type', 2, z.enum(eventTypeTuple, { error: `type must be ${eventTypes.join(' or ')} (comma-separated)` }))
    .optional()
    .describe('Event types, comma-separated.'),
  devices: listParam('devices', 1000).optional().describe('Device ids, comma-separated, case-insensitive.'),
  limit: intParam('limit', 1, 500).default(50).describe('At most this many events, newest first.'),
});

const eventsQuery = z.object({
  type: listParam(
    'type',
    hookEventTypes.length,
    z.enum(hookEventTypeTuple, { error: `type must be ${hookEventTypes.join(', ').replace(/, ([^,]+)$/, ' or $1')} (comma-separated)` }),
  )
    .optional()
    .describe(
      'Event types, comma-separated; default the device-status types. `hook.disabled` and `delivery.dead` are the operational events of the key\u2019s hooks.',
    ),
  after: scalarParam('after').optional().describe('An event id from your log: only later events are returned. An unknown id is a 400.'),
  limit: intParam('limit', 1, 500).default(100).describe('At most this many events, oldest first.'),
});

/** Events are stored as JSON text; the array is spliced, not re-serialised. */
function sendStoredJson(res: Response, payloads: string[]): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.end(`[${payloads.join(',')}]`);
}

export const pollDeviceStatus = defineRoute({
  method: 'get',
  path: '/v1/triggers/device-status',
  operationId: 'pollDeviceStatus',
  tag: 'Triggers',
  summary: 'Polling trigger: device status events',
  description: 'Newest first. The first call enrols the key with the poller (its first poll records a baseline) and returns `[]` if nothing happened yet.',
  auth,
  query: triggerQuery,
  responses: { 200: { description: 'Events, newest first.', schema: EventList } },
  async handler({ res, services, principal, query }) {
    const devices = query.devices?.map((id) => id.toLowerCase());
    await enrolKey(services.watches, services.poller, principal, true, waitsOf(res));
    sendStoredJson(res, await services.eventLog.recent(principal.keyHash, { types: query.type, devices, limit: query.limit }));
  },
});

export const sampleDeviceStatus = defineRoute({
  method: 'get',
  path: '/v1/triggers/device-status/sample',
  operationId: 'sampleDeviceStatus',
  tag: 'Triggers',
  summary: 'Sample events',
  description:
    'Events built from the key’s own devices (a canned device when it has none), each with `"sample": true`, for a platform’s set-up screen: the current state of up to three devices, plus whichever type is missing, so there is always at least one `device.offline` and one `device.online`.',
  auth,
  responses: { 200: { description: 'Sample events.', schema: SampleEventList } },
  async handler({ res, services, principal }) {
    res.json(await sampleEvents(services.devices, principal, services.config.HEARTBEAT_TIMEOUT_MS));
  },
});

export const listEvents = defineRoute({
  method: 'get',
  path: '/v1/events',
  operationId: 'listEvents',
  tag: 'Triggers',
  summary: 'Event log (replay)',
  description: 'The same events as the polling trigger, oldest first, kept 7 days.',
  auth,
  query: eventsQuery,
  responses: { 200: { description: 'Events, oldest first.', schema: EventLogList } },
  async handler({ res, services, principal, query }) {
    sendStoredJson(res, await services.eventLog.after(principal.keyHash, query.after, query.limit, query.type));
  },
});

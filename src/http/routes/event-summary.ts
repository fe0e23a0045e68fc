import { z } from 'zod';
import { component } from '../../catalog/registry.js';
import { eventTypes, type EventType } from '../../triggers/transitions.js';
import { summarise, summaryIntervals, summaryWindow } from '../../triggers/event-summary.js';
import { enumParam, listParam } from '../query.js';
import { defineRoute, type RouteAuth } from '../route.js';

/**
 * docs/triggers.md "Event summary": how many transitions of each type happened per hour (or day)
 * over the retained week, counted by the database. It feeds the console's chart; a dashboard of
 * any kind can read it instead of paging the whole log.
 */
const auth = { keys: 'device', headers: 'either', scopes: ['device:read'], confirmDeviceKey: true } as const satisfies RouteAuth;

const eventTypeTuple = eventTypes as unknown as readonly [EventType, ...EventType[]];

const summaryQuery = z.object({
  interval: enumParam('interval', summaryIntervals).default('hour').describe('The period counted: `hour` (default) or `day`, in UTC.'),
  type: listParam('type', 2, z.enum(eventTypeTuple, { error: `type must be ${eventTypes.join(' or ')} (comma-separated)` }))
    .optional()
    .describe('Event types, comma-separated (default: both).'),
});

const counts = z.record(z.string(), z.number().int().min(0)).describe('Events per type: every type asked for, 0 where none.');
const utcPeriod = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:00:00Z$/)
  .meta({ format: 'date-time' });

export const EventSummary = component(
  'EventSummary',
  z.strictObject({
    interval: z.enum(summaryIntervals),
    from: utcPeriod.describe('Start of the first period: the period that holds the start of the retained week.'),
    until: utcPeriod.describe('End of the last period (exclusive): the end of the current one.'),
    types: z.array(z.enum(eventTypeTuple)).describe('The types counted.'),
    totals: counts,
    buckets: z
      .array(z.strictObject({ start: utcPeriod.describe('Start of the period.'), counts }))
      .describe('Every period from `from` to `until`, oldest first, empty ones included.'),
  }),
);

export const eventSummary = defineRoute({
  method: 'get',
  path: '/v1/events/summary',
  operationId: 'eventSummary',
  tag: 'Triggers',
  summary: 'Events per hour or day',
  description:
    'How many `device.offline` and `device.online` events the key’s log holds per period of `occurred_at` (UTC), over the retained week up to now. ' +
    'Counted by the database; every period is listed, 0 where nothing happened. Events are logged while the key is watched (it has a hook, or called the polling trigger in the last 24 hours).',
  auth,
  query: summaryQuery,
  responses: { 200: { description: 'Counts per period and type.', schema: EventSummary } },
  async handler({ res, services, principal, query }) {
    const types = query.type ?? [...eventTypes];
    const window = summaryWindow(query.interval, services.clock.now());
    const rows = await services.eventLog.summary(principal.keyHash, { types, periodLength: window.periodLength, from: window.from, until: window.until });
    res.json(summarise(window, types, rows));
  },
});

import { z } from 'zod';
import { waitsOf } from '../../db/wait-budget.js';
import { enrolKey } from '../../triggers/device-triggers.js';
import { validationError } from '../../errors.js';
import { parseIso } from '../../time/timestamps.js';
import { deliveryStates } from '../../webhooks/delivery-log.js';
import { nextPageUrl } from '../base-url.js';
import { enumParam, intParam, scalarParam } from '../query.js';
import { Delivery, DeliveryDetail, DeliveryList, Hook, RecoverCount, RotatedSecret, TestDelivery } from '../responses.js';
import { defineRoute, type RouteAuth } from '../route.js';
import { hookDeviceIds, hookEvents } from './hooks.js';

/** docs/webhooks.md, "When something goes wrong": changing, testing and repairing a hook. */
const auth = { keys: 'device', headers: 'either', scopes: ['hooks:write'], confirmDeviceKey: true } as const satisfies RouteAuth;

const hookParams = z.object({ id: z.string().describe('The hook id (`hook_…`).') });
const deliveryParams = hookParams.extend({ delivery_id: z.string().describe('The delivery id (`dlv_…`), from the hook\u2019s deliveries.') });

const oneHook = { tag: 'Webhooks', auth, params: hookParams, errors: { 404: '`Hook not found` (also for a hook of another key).' } } as const;
const oneDelivery = {
  ...oneHook,
  params: deliveryParams,
  errors: { 404: '`Hook not found`, or `Delivery not found` (also for a delivery of another hook).' },
} as const;

const badBody = '`body must be a JSON object`, `Request body is not valid JSON`, or a bad field: `message` names the first, `details` lists every one.';

/** An absolute ISO 8601 time with a zone (`msOf` reads it). */
const instant = (name: string) =>
  scalarParam(name)
    .refine((text) => parseIso(text) !== null, `${name} must be a timestamp such as 2026-06-01T12:00:00Z`)
    .meta({ format: 'date-time' });
const msOf = (text: string | undefined): number | undefined => (text === undefined ? undefined : Math.floor(parseIso(text)! / 1000));

const patchBody = z
  .strictObject(
    {
      events: hookEvents.optional().describe('The event types to deliver from now on.'),
      device_ids: hookDeviceIds.optional().describe('Only events of these devices from now on; null = every device the key can read.'),
      enabled: z
        .boolean({ error: 'enabled must be true or false' })
        .optional()
        .describe('false: disabled (its pending deliveries are held); true: active again.'),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys'
          ? `only events, device_ids and enabled can be changed (not ${issue.keys.join(', ')}); for another target_url subscribe a new hook`
          : 'body must be a JSON object',
    },
  )
  .refine((b) => b.events !== undefined || b.device_ids !== undefined || b.enabled !== undefined, 'body must give at least one of events, device_ids, enabled');

export const updateHook = defineRoute({
  ...oneHook,
  method: 'patch',
  path: '/v1/hooks/{id}',
  operationId: 'updateHook',
  summary: 'Change, pause or resume a webhook',
  description:
    'Any of `events`, `device_ids`, `enabled`. `enabled: false` disables the hook (`status_reason` says the key\u2019s owner did): new events make no deliveries, and pending ones are `held`, not attempted nor lost. `enabled: true` makes a disabled hook active again (one disabled by a 410 too) and sends the held ones; what it missed meanwhile is sent by a recover.',
  body: patchBody,
  responses: { 200: { description: 'The hook as changed (no secret).', schema: Hook } },
  errors: {
    ...oneHook.errors,
    400: badBody,
    409: 'Enabling would pass `WEBHOOK_MAX_HOOKS_PER_KEY` (the limit is named), or another hook that is not disabled already has the same target_url, events and device ids (it is named).',
    415: 'Content-Type must be application/json.',
  },
  async handler({ res, services, principal, params, body }) {
    const hook = await services.hooks.update(principal.keyHash, params.id, {
      events: body.events,
      device_ids: body.device_ids === undefined ? undefined : (body.device_ids?.map((id) => id.toLowerCase()) ?? null),
      enabled: body.enabled,
    });
    if (body.enabled === true) await enrolKey(services.watches, services.poller, principal, false, waitsOf(res));
    res.json(hook);
  },
});

/** A position in a hook's deliveries (the last delivery shown), as an opaque cursor. */
const encodeCursor = (id: number): string => Buffer.from(JSON.stringify({ before: id })).toString('base64url');
function decodeCursor(cursor: string): number | null {
  try {
    const value = (JSON.parse(Buffer.from(cursor, 'base64url').toString()) as { before?: unknown }).before;
    if (Number.isSafeInteger(value) && (value as number) > 0) return value as number;
  } catch {
    // not a cursor of ours
  }
  return null;
}

const deliveriesQuery = z.object({
  limit: intParam('limit', 1, 500)
    .default(100)
    .describe('Page size, 1–500 (default 100). The next page is in the `Link` header; `X-Total-Count` counts every match.'),
  cursor: scalarParam('cursor')
    .refine((c) => decodeCursor(c) !== null, 'cursor is not valid; start again without it')
    .optional()
    .describe('The opaque cursor of the next page, from the previous page\u2019s `Link`.'),
  status: enumParam('status', deliveryStates).optional().describe('Only deliveries in this state (`held`: pending while the hook is disabled).'),
  event_id: scalarParam('event_id').optional().describe('Only the delivery of this event.'),
  since: instant('since').optional().describe('Only events recorded at or after this time (ISO 8601).'),
  until: instant('until').optional().describe('Only events recorded before this time (ISO 8601).'),
});

export const listHookDeliveries = defineRoute({
  ...oneHook,
  method: 'get',
  path: '/v1/hooks/{id}/deliveries',
  operationId: 'listHookDeliveries',
  summary: 'Deliveries',
  description:
    'A delivery is one event to one hook, with its latest attempt. Newest first, in pages of `limit`: follow the `Link` header\u2019s `rel="next"` until there is none.',
  query: deliveriesQuery,
  responses: {
    200: {
      description: 'One page of the hook\u2019s deliveries.',
      schema: DeliveryList,
      headers: {
        'X-Total-Count': { description: 'Every delivery that matches, not just this page.', schema: { type: 'integer', minimum: 0 } },
        Link: { description: 'When there is more: `<next page URL>; rel="next"`.', schema: { type: 'string' } },
      },
    },
  },
  async handler({ req, res, services, principal, params, query }) {
    const hook = await services.hooks.get(principal.keyHash, params.id);
    const before = query.cursor === undefined ? undefined : decodeCursor(query.cursor)!;
    const page = await services.hookOps.deliveries.page(hook, { ...query, since: msOf(query.since), until: msOf(query.until), before });
    res.setHeader('X-Total-Count', String(page.total));
    if (page.next !== null) res.setHeader('Link', `<${nextPageUrl(req, services.config.PUBLIC_URL, encodeCursor(page.next))}>; rel="next"`);
    res.json(page.items);
  },
});

export const getHookDelivery = defineRoute({
  ...oneDelivery,
  method: 'get',
  path: '/v1/hooks/{id}/deliveries/{delivery_id}',
  operationId: 'getHookDelivery',
  summary: 'One delivery with every attempt',
  description:
    'Each attempt with the request headers sent (the signature, never the secret), the status code, the first 1,024 bytes of the answer, the duration, the error and when the next attempt was due.',
  responses: { 200: { description: 'The delivery and its attempts, oldest first.', schema: DeliveryDetail } },
  async handler({ res, services, principal, params }) {
    const hook = await services.hooks.get(principal.keyHash, params.id);
    res.json(await services.hookOps.deliveries.detail(hook, params.delivery_id));
  },
});

export const resendHookDelivery = defineRoute({
  ...oneDelivery,
  method: 'post',
  path: '/v1/hooks/{id}/deliveries/{delivery_id}/resend',
  operationId: 'resendHookDelivery',
  summary: 'Resend a delivery',
  description:
    'One more attempt now, with the same `webhook-id`, whatever the delivery\u2019s state; a dead (or delivered) one becomes pending again with a fresh retry schedule. Safe to repeat.',
  responses: { 202: { description: 'Queued; the deliverer sends it at once.', schema: Delivery } },
  errors: { ...oneDelivery.errors, 409: 'The hook is disabled (enable it first), or the delivery is a test (send a new one).' },
  async handler({ res, services, principal, params }) {
    res.status(202).json(await services.hookOps.resend(principal.keyHash, params.id, params.delivery_id));
  },
});

export const testHook = defineRoute({
  ...oneHook,
  method: 'post',
  path: '/v1/hooks/{id}/test',
  operationId: 'testHook',
  summary: 'Send a test delivery',
  description:
    'Sends one signed delivery of type `webhook.test` now, never retried, and answers with its outcome within `WEBHOOK_TIMEOUT_MS`. It shows in the hook\u2019s deliveries. The target rules apply as for every delivery.',
  responses: { 200: { description: 'What the receiver answered.', schema: TestDelivery } },
  async handler({ res, services, principal, params }) {
    res.json(await services.hookOps.sendTest(principal.keyHash, params.id));
  },
});

const rotateBody = z.strictObject(
  {
    secret: z
      .string({ error: 'secret must be a string' })
      .regex(/^whsec_[A-Za-z0-9+/]+=*$/, 'secret must be whsec_ followed by base64')
      .refine(
        (s) => Buffer.from(s.slice(6), 'base64').length >= 24 && Buffer.from(s.slice(6), 'base64').length <= 64,
        'secret must encode 24 to 64 bytes (whsec_ + base64 of 32 random bytes is usual)',
      )
      .optional()
      .describe('The new secret; absent = a generated one.'),
  },
  { error: (issue) => (issue.code === 'unrecognized_keys' ? `only secret may be given (not ${issue.keys.join(', ')})` : 'body must be a JSON object') },
);

export const rotateHookSecret = defineRoute({
  ...oneHook,
  method: 'post',
  path: '/v1/hooks/{id}/secret/rotate',
  operationId: 'rotateHookSecret',
  summary: 'Rotate the signing secret',
  description:
    'The body is optional. For `WEBHOOK_SECRET_OVERLAP_MS` (a day by default) every delivery carries two signatures, with the new secret first and the old one second, so a receiver switches without losing a delivery; then only the new one.',
  body: rotateBody,
  bodyOptional: true,
  responses: { 200: { description: 'The new secret, shown this once.', schema: RotatedSecret } },
  errors: { ...oneHook.errors, 400: badBody, 415: 'Content-Type must be application/json.' },
  async handler({ res, services, principal, params, body }) {
    const given = (body as z.output<typeof rotateBody> | undefined)?.secret;
    res.json({ secret: await services.hooks.rotateSecret(principal.keyHash, params.id, given) });
  },
});

const recoverBody = z
  .strictObject(
    {
      since: z
        .string({ error: 'since is required: a timestamp such as 2026-06-01T12:00:00Z' })
        .refine((t) => parseIso(t) !== null, 'since must be a timestamp such as 2026-06-01T12:00:00Z')
        .meta({ format: 'date-time' })
        .describe('From when the events were recorded (ISO 8601, inclusive).'),
      until: z
        .string({ error: 'until must be a string' })
        .refine((t) => parseIso(t) !== null, 'until must be a timestamp such as 2026-06-01T12:00:00Z')
        .meta({ format: 'date-time' })
        .optional()
        .describe('Until when (exclusive); default now.'),
      dry_run: z.boolean({ error: 'dry_run must be true or false' }).optional().describe('true: only count, change nothing.'),
    },
    {
      error: (issue) =>
        issue.code === 'unrecognized_keys' ? `only since, until and dry_run may be given (not ${issue.keys.join(', ')})` : 'body must be a JSON object',
    },
  )
  .refine((b) => b.until === undefined || parseIso(b.until) === null || parseIso(b.since) === null || parseIso(b.until)! > parseIso(b.since)!, {
    message: 'until must be after since',
    path: ['until'],
  });

export const recoverHook = defineRoute({
  ...oneHook,
  method: 'post',
  path: '/v1/hooks/{id}/recover',
  operationId: 'recoverHook',
  summary: 'Recover failed and missed deliveries',
  description:
    'Queues again every `dead` delivery of the hook whose event was recorded in [`since`, `until`), and makes the deliveries never made while the hook was disabled (events it subscribes to, still retained). Works in slices in the background; safe to repeat, and two recovers at once make no delivery twice.',
  body: recoverBody,
  responses: {
    200: { description: '`dry_run`: how many it would queue; nothing changed.', schema: RecoverCount },
    202: { description: 'How many it queues; they are sent as the deliverer gets to them.', schema: RecoverCount },
  },
  errors: { ...oneHook.errors, 400: badBody, 415: 'Content-Type must be application/json.' },
  async handler({ res, services, principal, params, body }) {
    const since = msOf(body.since)!;
    // Default: everything recorded up to now, this millisecond's events included.
    const until = msOf(body.until) ?? services.clock.now() + 1;
    if (until <= since) throw validationError([{ path: 'since', message: 'since must be before now' }]);
    const count = await services.hookOps.recover(principal.keyHash, params.id, { since, until }, body.dry_run === true);
    res.status(body.dry_run === true ? 200 : 202).json({ count });
  },
});

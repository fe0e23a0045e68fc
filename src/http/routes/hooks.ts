import { z } from 'zod';
import { defaultErrorText } from '../operation-spec.js';
import { waitsOf } from '../../db/wait-budget.js';
import { enrolKey } from '../../triggers/device-triggers.js';
import { eventTypes } from '../../triggers/transitions.js';
import { hookEventTypes, hookEventTypeTuple } from '../../catalog/event.js';
import { validationError } from '../../errors.js';
import { privateTargetsHint, resolveTargetProblem, type TargetPolicy } from '../../webhooks/target-guard.js';
import { nextPageUrl } from '../base-url.js';
import { intParam, scalarParam } from '../query.js';
import { Hook, HookList, NewHook } from '../responses.js';
import { defineRoute, type Route, type RouteAuth } from '../route.js';

/** A hook's `events` as a body gives them (POST and PATCH alike). */
export const hookEvents = z
  .array(z.enum(hookEventTypeTuple, { error: `events must list ${hookEventTypes.join(', ').replace(/, ([^,]+)$/, ' and/or $1')}` }), {
    error: 'events must be an array',
  })
  .min(1, 'events must not be empty')
  .max(hookEventTypes.length, `events must list at most ${hookEventTypes.length} event types`)
  .refine((events) => new Set(events).size === events.length, 'events must not repeat an event type')
  .meta({ uniqueItems: true });

/** A hook's `device_ids` as a body gives them (POST and PATCH alike); null = every device. */
export const hookDeviceIds = z
  .array(
    z
      .string({ error: 'device_ids must list strings' })
      .min(1, 'device_ids must not contain an empty id')
      .max(200, 'device_ids must be at most 200 characters each'),
    {
      error: 'device_ids must be an array of device ids or null',
    },
  )
  .min(1, 'device_ids must not be empty (use null for every device)')
  .max(1000, 'device_ids must list at most 1000 ids')
  .nullable();

/** docs/webhooks.md: REST-hook subscriptions and their delivery log. */
const auth = { keys: 'device', headers: 'either', scopes: ['hooks:write'], confirmDeviceKey: true } as const satisfies RouteAuth;

const hookParams = z.object({
  id: z.string().describe('The hook id (`hook_…`).'),
});

/**
 * The body of `POST /v1/hooks`. `target_url` must be https unless private targets are allowed
 * (development), so the schema, and the document generated from it, depend on that setting;
 * whether the host resolves to a permitted address is checked after parsing.
 */
function hookBody(allowPrivateTargets: boolean, allowedTargets = false) {
  const httpAllowed = allowPrivateTargets || allowedTargets;
  const schemes = httpAllowed ? 'http:// or https://' : 'https://';
  return z.object(
    {
      target_url: z
        .string({ error: 'target_url is required and must be a string' })
        .min(1, 'target_url is required')
        .max(2048, 'target_url must be at most 2048 characters')
        // No spaces or characters a URI may not contain: what `format: uri` promises.
        .regex(
          httpAllowed ? /^https?:\/\/[^\s<>"{}|\\^`]+$/i : /^https:\/\/[^\s<>"{}|\\^`]+$/i,
          `target_url must be an absolute ${schemes} URL${httpAllowed ? '' : `; ${privateTargetsHint}`}`,
        )
        .meta({ format: 'uri' })
        .describe(
          allowPrivateTargets
            ? 'Where deliveries are POSTed (`http://` and private addresses are allowed on this instance).'
            : allowedTargets
              ? 'Where deliveries are POSTed: `https://`, not resolving to a private, loopback or link-local address, unless it is one of the targets this instance allows (those may be `http://` and private).'
              : 'Where deliveries are POSTed: `https://`, not resolving to a private, loopback or link-local address.',
        ),
      events: hookEvents
        .optional()
        .describe(
          'Event types to deliver; default both device types. `hook.disabled` and `delivery.dead` (operational events of the key\u2019s other hooks) only when listed.',
        ),
      device_ids: hookDeviceIds.optional().describe('Only events of these devices; null or absent = every device the key can read.'),
    },
    { error: 'body must be a JSON object' },
  );
}

/** A position in the hooks list, as an opaque cursor (base64url of `[created_at, id]`). */
function encodeHookCursor(position: { created_at: string; id: string }): string {
  return Buffer.from(JSON.stringify([position.created_at, position.id])).toString('base64url');
}

function decodeHookCursor(cursor: string): { created_at: string; id: string } | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string')
      return { created_at: value[0], id: value[1] };
  } catch {
    // not a cursor of ours
  }
  return null;
}

/** `GET /v1/hooks`: pages of at most `limit` (default 100) hooks, oldest first. */
const hookListQuery = z.object({
  limit: intParam('limit', 1, 500)
    .default(100)
    .describe('Page size, 1–500 (default 100). The next page is in the `Link` header; `X-Total-Count` gives the key\u2019s hooks in all.'),
  cursor: scalarParam('cursor')
    .refine((cursor) => decodeHookCursor(cursor) !== null, 'cursor is not valid; start again without it')
    .optional()
    .describe('The opaque cursor of the next page, from the previous page\u2019s `Link`.'),
});

/** What the routes of one hook (`/v1/hooks/{id}…`) share. */
const oneHook = {
  tag: 'Webhooks',
  auth,
  params: hookParams,
  errors: { 404: '`Hook not found` (also for a hook of another key).' },
} as const;

/** Subscribing: the body's schema depends on which targets the instance accepts besides public https ones. */
export function createHook(targets: TargetPolicy): Route {
  return defineRoute({
    method: 'post',
    path: '/v1/hooks',
    operationId: 'createHook',
    tag: 'Webhooks',
    summary: 'Subscribe a webhook',
    description:
      'Needs `device:read` as well, since a hook delivers device data. The same key, URL, events and device ids again answer 200 with the existing hook (and its secret). Deliveries are described under `webhooks`.',
    auth: { ...auth, scopes: ['hooks:write', 'device:read'] },
    body: hookBody(targets.allowAll, targets.origins.length > 0 || targets.ranges.length > 0),
    responses: {
      201: { description: 'Subscribed.', schema: NewHook },
      200: { description: 'The same subscription already existed.', schema: NewHook },
    },
    errors: {
      400: '`body must be a JSON object`, `Request body is not valid JSON`, a body that does not decode per its `Content-Encoding`, or a bad field: `message` names the first, `details` lists every one.',
      409: 'The key already holds `WEBHOOK_MAX_HOOKS_PER_KEY` hooks that are not disabled (1,000 by default): `message` names the limit. Delete one first.',
      413: defaultErrorText[413],
      415: '`Content-Type must be application/json`, or a `Content-Encoding` (gzip, deflate, br, identity) or charset (utf-8) that is not supported.',
    },
    async handler({ res, services, principal, body }) {
      const problem = await resolveTargetProblem(body.target_url, services.targets);
      if (problem) throw validationError([{ path: 'target_url', message: problem }]);
      await enrolKey(services.watches, services.poller, principal, false, waitsOf(res));
      const { hook, created } = await services.hooks.create(principal.keyHash, {
        target_url: body.target_url,
        events: body.events ?? [...eventTypes],
        device_ids: body.device_ids?.map((id) => id.toLowerCase()) ?? null,
      });
      const { status_reason: _reason, ...shown } = hook;
      res.status(created ? 201 : 200).json(shown);
    },
  });
}

export const listHooks = defineRoute({
  method: 'get',
  path: '/v1/hooks',
  operationId: 'listHooks',
  tag: 'Webhooks',
  summary: 'List webhooks',
  description: 'Oldest first, in pages of `limit` (default 100): follow the `Link` header\u2019s `rel="next"` until there is none.',
  auth,
  query: hookListQuery,
  responses: {
    200: {
      description: 'One page of the key’s hooks (no secrets).',
      schema: HookList,
      headers: {
        'X-Total-Count': { description: 'The key\u2019s hooks in all, not just this page.', schema: { type: 'integer', minimum: 0 } },
        Link: { description: 'When there is more: `<next page URL>; rel="next"`.', schema: { type: 'string' } },
      },
    },
  },
  async handler({ req, res, services, principal, query }) {
    const after = query.cursor === undefined ? undefined : (decodeHookCursor(query.cursor) ?? undefined);
    const page = await services.hooks.page(principal.keyHash, { limit: query.limit, after });
    res.setHeader('X-Total-Count', String(page.total));
    if (page.next) res.setHeader('Link', `<${nextPageUrl(req, services.config.PUBLIC_URL, encodeHookCursor(page.next))}>; rel="next"`);
    res.json(page.hooks);
  },
});

export const getHook = defineRoute({
  ...oneHook,
  method: 'get',
  path: '/v1/hooks/{id}',
  operationId: 'getHook',
  summary: 'One webhook',
  responses: { 200: { description: 'The hook (no secret).', schema: Hook } },
  async handler({ res, services, principal, params }) {
    res.json(await services.hooks.get(principal.keyHash, params.id));
  },
});

export const deleteHook = defineRoute({
  ...oneHook,
  method: 'delete',
  path: '/v1/hooks/{id}',
  operationId: 'deleteHook',
  summary: 'Unsubscribe',
  description: 'Queued deliveries of the hook go with it.',
  responses: { 204: { description: 'Deleted.' } },
  async handler({ res, services, principal, params }) {
    await services.hooks.delete(principal.keyHash, params.id);
    res.status(204).end();
  },
});

import { z } from 'zod';
import type { OptionSource } from '../manifest/schema.js';
import { decodeCursor, type OptionFormat } from '../options/render.js';
import { resources } from '../options/resources.js';
import { eventTypes, type EventType } from '../triggers/transitions.js';
import { boolParam, enumParam, intParam, listParam, scalarParam } from './query.js';

/**
 * The request side of every route: query, path parameters and bodies, as zod schemas. The
 * routes validate with these and the OpenAPI document (src/openapi) is generated from them,
 * so the two cannot drift. Messages are part of the contract (docs/api.md): a bad parameter
 * is named at the start of its message.
 */

const eventTypeTuple = eventTypes as unknown as readonly [EventType, ...EventType[]];

// ---- Device area (docs/devices.md) ----

export const deviceListQuery = z.object({
  is_online: boolParam('is_online').optional().describe('`true`: only online devices; `false`: only offline devices.'),
  ids: listParam('ids', 1000)
    .optional()
    .describe('Device ids, comma-separated (the parameter may also repeat), trimmed, case-insensitive, at most 1000.'),
  page: intParam('page', 1, Number.MAX_SAFE_INTEGER).default(1).describe('Page number, from 1.'),
  page_size: intParam('page_size', 1, 1000).default(100).describe('Devices per page, 1 to 1000.'),
});

export const deviceParams = z.object({
  id: z.string().describe('The device id (normally its MAC address), case-insensitive.'),
});

// ---- Menu area (docs/menus.md) ----

const groupFilter = (name: string, what: string) =>
  listParam(name)
    .optional()
    .describe(`${what}, comma-separated; the parameter may repeat. Values are OR-ed, filters AND-ed.`);

export const groupsQuery = z.object({
  menus: groupFilter('menus', 'Menu ids'),
  groups: groupFilter('groups', 'Group ids (matched at any depth)'),
  tags: groupFilter('tags', 'Tags (matched at any depth); `key:*` matches every tag starting with `key:`'),
});

// ---- Options (docs/options.md) ----

/** The formats an option source offers: `tree` only where the manifest declares one. */
export function formatsOf(source: OptionSource): [OptionFormat, ...OptionFormat[]] {
  return source.tree ? ['tuples', 'objects', 'n8n', 'tree'] : ['tuples', 'objects', 'n8n'];
}

/**
 * The query of one option source. `q` exists only where the source is searchable and
 * `parent` only where it is a tree; `limit` is capped by the source's paging.
 */
export function optionQuery(source: OptionSource) {
  const full = z.object({
    format: enumParam('format', formatsOf(source))
      .default('tuples')
      .describe(
        source.tree
          ? '`tuples` `[[label, value]]`, `objects` `[{label, value}]`, `n8n` `{results, paginationToken?}`, or `tree` (one level: `[[name, value, null, hasChildren]]`).'
          : '`tuples` `[[label, value]]`, `objects` `[{label, value}]` or `n8n` `{results, paginationToken?}`.',
      ),
    q: scalarParam('q')
      .max(200, 'q must be at most 200 characters')
      .optional()
      .describe('Case- and accent-insensitive substring of the label; empty = no filter.'),
    limit: intParam('limit', 1, source.paging.maxLimit)
      .optional()
      .describe('Page size. Without it the whole list is returned; with it, the next page is in the `Link` header (and `paginationToken` for n8n).'),
    cursor: scalarParam('cursor')
      .refine((cursor) => decodeCursor(cursor) !== null, 'cursor is not valid; start again without it')
      .optional()
      .describe('The opaque cursor of the next page, from the previous page.'),
    parent: scalarParam('parent')
      .optional()
      .describe('With `format=tree`: the group whose children to list (absent = the top level). Ignored otherwise.'),
  });
  const dropped = { ...(source.search ? {} : { q: true as const }), ...(source.tree ? {} : { parent: true as const }) };
  // Typed as the full shape: a dropped key simply never appears in the output.
  return full.omit(dropped) as unknown as typeof full;
}

/** The path parameters of one option source (e.g. `menuId`), 1 to 200 characters each. */
export function optionParams(source: OptionSource) {
  const shape: Record<string, z.ZodType<string>> = {};
  for (const name of resources[source.resource]!.params) {
    const declared = source.params.find((param) => param.name === name);
    const message = `${name} must be 1 to 200 characters`;
    shape[name] = z
      .string()
      .min(1, message)
      .max(200, message)
      .describe(declared?.description ?? declared?.title ?? name);
  }
  return z.object(shape);
}

// ---- Triggers and events (docs/triggers.md) ----

export const triggerQuery = z.object({
  type: listParam(
    'type',
    2,
    z.enum(eventTypeTuple, { error: `type must be ${eventTypes.join(' or ')} (comma-separated)` }),
  )
    .optional()
    .describe('Event types, comma-separated.'),
  devices: listParam('devices', 1000).optional().describe('Device ids, comma-separated, case-insensitive.'),
  limit: intParam('limit', 1, 500).default(50).describe('At most this many events, newest first.'),
});

export const eventsQuery = z.object({
  after: scalarParam('after')
    .optional()
    .describe('An event id from your log: only later events are returned. An unknown id is a 400.'),
  limit: intParam('limit', 1, 500).default(100).describe('At most this many events, oldest first.'),
});

// ---- Webhooks (docs/webhooks.md) ----

export const hookParams = z.object({
  id: z.string().describe('The hook id (`hook_…`).'),
});

/**
 * The body of `POST /v1/hooks`. `target_url` must be https unless private targets are allowed
 * (development), so the schema, and the document generated from it, depend on that setting;
 * whether the host resolves to a permitted address is checked after parsing.
 */
export function hookBody(allowPrivateTargets: boolean, allowedTargets = false) {
  const httpAllowed = allowPrivateTargets || allowedTargets;
  const schemes = httpAllowed ? 'http:// or https://' : 'https://';
  return z.object(
    {
      target_url: z
        .string({ error: 'target_url is required and must be a string' })
        .min(1, 'target_url is required')
        .max(2048, 'target_url must be at most 2048 characters')
        // No spaces or characters a URI may not contain: what `format: uri` promises.
        .regex(httpAllowed ? /^https?:\/\/[^\s<>"{}|\\^`]+$/i : /^https:\/\/[^\s<>"{}|\\^`]+$/i, `target_url must be an absolute ${schemes} URL`)
        .meta({ format: 'uri' })
        .describe(
          allowPrivateTargets
            ? 'Where deliveries are POSTed (`http://` and private addresses are allowed on this instance).'
            : allowedTargets
              ? 'Where deliveries are POSTed: `https://`, not resolving to a private, loopback or link-local address, unless it is one of the targets this instance allows (those may be `http://` and private).'
              : 'Where deliveries are POSTed: `https://`, not resolving to a private, loopback or link-local address.',
        ),
      events: z
        .array(z.enum(eventTypeTuple, { error: `events must list ${eventTypes.join(' and/or ')}` }), { error: 'events must be an array' })
        .min(1, 'events must not be empty')
        .max(eventTypes.length, `events must list at most ${eventTypes.length} event types`)
        .refine((events) => new Set(events).size === events.length, 'events must not repeat an event type')
        .meta({ uniqueItems: true })
        .optional()
        .describe('Event types to deliver; default both.'),
      device_ids: z
        .array(z.string({ error: 'device_ids must list strings' }).min(1, 'device_ids must not contain an empty id').max(200, 'device_ids must be at most 200 characters each'), {
          error: 'device_ids must be an array of device ids or null',
        })
        .min(1, 'device_ids must not be empty (use null for every device)')
        .max(1000, 'device_ids must list at most 1000 ids')
        .nullable()
        .optional()
        .describe('Only events of these devices; null or absent = every device the key can read.'),
    },
    { error: 'body must be a JSON object' },
  );
}

/** A position in the hooks list, as an opaque cursor (base64url of `[created_at, id]`). */
export function encodeHookCursor(position: { created_at: string; id: string }): string {
  return Buffer.from(JSON.stringify([position.created_at, position.id])).toString('base64url');
}

export function decodeHookCursor(cursor: string): { created_at: string; id: string } | null {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString());
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') return { created_at: value[0], id: value[1] };
  } catch {
    // not a cursor of ours
  }
  return null;
}

/** `GET /v1/hooks`: pages of at most `limit` (default 100) hooks, oldest first. */
export const hookListQuery = z.object({
  limit: intParam('limit', 1, 500).default(100).describe('Page size, 1–500 (default 100). The next page is in the `Link` header; `X-Total-Count` gives the key\u2019s hooks in all.'),
  cursor: scalarParam('cursor')
    .refine((cursor) => decodeHookCursor(cursor) !== null, 'cursor is not valid; start again without it')
    .optional()
    .describe('The opaque cursor of the next page, from the previous page\u2019s `Link`.'),
});

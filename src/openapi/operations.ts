import type { Manifest, OptionSource } from '../manifest/schema.js';
import { resources } from '../options/resources.js';
import {
  deviceListQuery,
  deviceParams,
  eventsQuery,
  formatsOf,
  groupsQuery,
  hookBody,
  hookListQuery,
  hookParams,
  optionParams,
  optionQuery,
  triggerQuery,
} from '../http/schemas.js';
import {
  ConnectorManifest,
  DeliveryAttemptList,
  Device,
  DevicePage,
  EventList,
  GroupList,
  Health,
  HookList,
  Hook,
  Me,
  MenuList,
  NewHook,
  optionBodies,
  Readiness,
  SampleEventList,
  schemaRef,
  WebhookDelivery,
} from '../http/responses.js';
import { defaultErrorText, type Json, type OperationSpec } from './operation.js';

/**
 * Every operation of the service, as data: one entry per route (option routes from the
 * manifest's option sources, exactly as the routes are registered), and the webhook the
 * service sends. test/integration/openapi.test.ts checks this list against the routes
 * Express has.
 */

/** What the document depends on besides the manifest. */
export interface DocumentOptions {
  /** `WEBHOOK_ALLOW_PRIVATE_TARGETS`: whether `target_url` may be `http://`. */
  allowPrivateTargets: boolean;
  /** Whether `WEBHOOK_ALLOWED_TARGETS` lists targets (which may be `http://` and private). */
  allowedTargets?: boolean;
}

const deviceAuth = { headers: 'bearer', scopes: ['device:read'] } as const satisfies OperationSpec['auth'];
const menuAuth = { headers: 'x-api-key', scopes: ['menu:read'] } as const satisfies OperationSpec['auth'];
const eventAuth = { headers: 'either', scopes: ['device:read'] } as const satisfies OperationSpec['auth'];
const hookAuth = { headers: 'either', scopes: ['hooks:write'] } as const satisfies OperationSpec['auth'];

const optionHeaders: Record<string, Json> = {
  ETag: { description: 'Strong tag of this body; send it back as `If-None-Match`.', schema: { type: 'string' } },
  'Cache-Control': { description: '`private, max-age=<cache TTL in seconds>`.', schema: { type: 'string' } },
  'X-Total-Count': { description: 'Every match, not just this page.', schema: { type: 'integer', minimum: 0 } },
  'X-Cache': { description: '`HIT`, `MISS` or `STALE`.', schema: { type: 'string', enum: ['HIT', 'MISS', 'STALE'] } },
  Link: { description: 'With `limit`, when there is more: `<next page URL>; rel="next"`.', schema: { type: 'string' } },
};

function camel(id: string): string {
  return id.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

function optionOperation(source: OptionSource): OperationSpec {
  const def = resources[source.resource]!;
  const formats = formatsOf(source);
  const params = def.params;
  const notFound = params.length > 0 ? { 404: `The ${params.map((p) => `\`${p}\``).join(', ')} is unknown or not accessible (e.g. \`Menu not found\`).` } : {};
  return {
    method: 'get',
    path: source.path,
    operationId: `${camel(source.id)}Options`,
    tag: 'Options',
    summary: `${source.title} dropdown`,
    description: [
      source.description,
      `Option source \`${source.id}\` of the manifest: label \`${source.label}\`, value \`${source.value}\`, ${source.order === 'label' ? 'sorted by label' : 'in source order'}.`,
    ]
      .filter(Boolean)
      .join(' '),
    auth: { headers: def.area === 'device' ? 'either' : 'x-api-key', scopes: [source.scope] },
    params: params.length > 0 ? optionParams(source) : undefined,
    query: optionQuery(source),
    extraParameters: [
      { name: 'If-None-Match', in: 'header', required: false, description: 'An `ETag` from before: 304 when it still matches.', schema: { type: 'string' } },
    ],
    responses: {
      200: {
        description: `The options, in the requested \`format\` (${formats.join(', ')}).`,
        content: {
          type: 'application/json',
          schema: { anyOf: formats.map((format) => schemaRef(optionBodies[format])) },
        },
        headers: optionHeaders,
      },
      304: { description: 'Not modified: `If-None-Match` matches the current `ETag`.', headers: { ETag: optionHeaders.ETag! } },
    },
    errors: notFound,
  };
}

export function operations(manifest: Manifest, options: DocumentOptions): OperationSpec[] {
  return [
    {
      method: 'get', path: '/devices', operationId: 'listDevices', tag: 'Devices', summary: 'List devices',
      description: 'The devices the key’s user may read, ordered by `registered_at`, then `id`. Ids are upper case. A page past the end has `data: []`.',
      auth: deviceAuth, query: deviceListQuery,
      responses: { 200: { description: 'One page of devices.', schema: DevicePage } },
    },
    {
      method: 'get', path: '/devices/{id}', operationId: 'getDevice', tag: 'Devices', summary: 'One device',
      description: 'The id matches case-insensitively; the answer’s id is lower case.',
      auth: deviceAuth, params: deviceParams,
      responses: { 200: { description: 'The device.', schema: Device } },
      errors: { 404: '`Device not found`: absent, or the key’s user may not read it.' },
    },
    {
      method: 'get', path: '/v1/menus', operationId: 'listMenus', tag: 'Menus', summary: 'List menus',
      description: 'The menus of the key’s account, with their top-level group count.',
      auth: menuAuth,
      responses: { 200: { description: 'The menus.', schema: MenuList } },
    },
    {
      method: 'get', path: '/v1/groups', operationId: 'listGroups', tag: 'Menus', summary: 'Group trees',
      description:
        'No filter: the top-level groups of every menu. `menus` only: the top-level groups of those menus. `groups` / `tags`: every matching group at any depth as a top-level entry with its whole subtree (a match inside a returned subtree is not repeated); `menus` narrows the search.',
      auth: menuAuth, query: groupsQuery,
      responses: { 200: { description: 'Groups in source order; every `metadata.*.total` equals its array.', schema: GroupList } },
    },
    ...manifest.optionSources.map(optionOperation),
    {
      method: 'get', path: '/v1/me', operationId: 'getMe', tag: 'Account', summary: 'Who am I (auth test)',
      description: 'The key and its account in embedded mode; `{"key":{"scopes":null},"account":null}` in upstream mode once the upstream accepted the key.',
      auth: { headers: 'either', scopes: [] },
      responses: { 200: { description: 'The key and account.', schema: Me } },
    },
    {
      method: 'get', path: '/v1/triggers/device-status', operationId: 'pollDeviceStatus', tag: 'Triggers', summary: 'Polling trigger: device status events',
      description: 'Newest first. The first call enrols the key with the poller (its first poll records a baseline) and returns `[]` if nothing happened yet.',
      auth: eventAuth, query: triggerQuery,
      responses: { 200: { description: 'Events, newest first.', schema: EventList } },
    },
    {
      method: 'get', path: '/v1/triggers/device-status/sample', operationId: 'sampleDeviceStatus', tag: 'Triggers', summary: 'Sample events',
      description: 'Events built from the key’s own devices (a canned device when it has none), each with `"sample": true`, for a platform’s set-up screen: the current state of up to three devices, plus whichever type is missing, so there is always at least one `device.offline` and one `device.online`.',
      auth: eventAuth,
      responses: { 200: { description: 'Sample events.', schema: SampleEventList } },
    },
    {
      method: 'get', path: '/v1/events', operationId: 'listEvents', tag: 'Triggers', summary: 'Event log (replay)',
      description: 'The same events as the polling trigger, oldest first, kept 7 days.',
      auth: eventAuth, query: eventsQuery,
      responses: { 200: { description: 'Events, oldest first.', schema: EventList } },
    },
    {
      method: 'post', path: '/v1/hooks', operationId: 'createHook', tag: 'Webhooks', summary: 'Subscribe a webhook',
      description: 'Needs `device:read` as well, since a hook delivers device data. The same key, URL, events and device ids again answer 200 with the existing hook (and its secret). Deliveries are described under `webhooks`.',
      auth: { headers: 'either', scopes: ['hooks:write', 'device:read'] }, body: hookBody(options.allowPrivateTargets, options.allowedTargets),
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
    },
    {
      method: 'get', path: '/v1/hooks', operationId: 'listHooks', tag: 'Webhooks', summary: 'List webhooks',
      description: 'Oldest first, in pages of `limit` (default 100): follow the `Link` header\u2019s `rel="next"` until there is none.',
      auth: hookAuth, query: hookListQuery,
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
    },
    {
      method: 'get', path: '/v1/hooks/{id}', operationId: 'getHook', tag: 'Webhooks', summary: 'One webhook',
      auth: hookAuth, params: hookParams,
      responses: { 200: { description: 'The hook (no secret).', schema: Hook } },
      errors: { 404: '`Hook not found` (also for a hook of another key).' },
    },
    {
      method: 'delete', path: '/v1/hooks/{id}', operationId: 'deleteHook', tag: 'Webhooks', summary: 'Unsubscribe',
      description: 'Queued deliveries of the hook go with it.',
      auth: hookAuth, params: hookParams,
      responses: { 204: { description: 'Deleted.' } },
      errors: { 404: '`Hook not found` (also for a hook of another key).' },
    },
    {
      method: 'get', path: '/v1/hooks/{id}/deliveries', operationId: 'listHookDeliveries', tag: 'Webhooks', summary: 'Delivery attempts',
      auth: hookAuth, params: hookParams,
      responses: { 200: { description: 'The latest 100 attempts, newest first.', schema: DeliveryAttemptList } },
      errors: { 404: '`Hook not found` (also for a hook of another key).' },
    },
    {
      method: 'get', path: '/healthz', operationId: 'health', tag: 'Service', summary: 'Liveness',
      responses: { 200: { description: 'The process is up.', schema: Health } },
    },
    {
      method: 'get', path: '/readyz', operationId: 'readiness', tag: 'Service', summary: 'Readiness',
      description: 'The database is usable and, in upstream mode, each upstream answered within the last minute or answers now.',
      responses: {
        200: { description: 'Ready.', schema: Readiness },
        503: { description: 'Not ready; `checks` says what failed.', schema: Readiness },
      },
    },
    {
      method: 'get', path: '/v1/manifest', operationId: 'getManifest', tag: 'Service', summary: 'Connector manifest',
      description: 'For platforms and integrators: `baseUrl` is `PUBLIC_URL`, or taken from the request (a malformed `Host` is replaced by `localhost:<port>`); `$schema` is the absolute URL of its JSON Schema.',
      responses: { 200: { description: 'The manifest.', schema: ConnectorManifest } },
    },
    {
      method: 'get', path: '/v1/manifest/schema', operationId: 'getManifestSchema', tag: 'Service', summary: 'Connector manifest schema',
      description: 'The JSON Schema (draft 2020-12) the manifest validates against (`manifests/connector.schema.json`, with `$id` set to this URL).',
      responses: { 200: { description: 'JSON Schema.', content: { type: 'application/schema+json', schema: { type: 'object' } } } },
    },
    {
      method: 'get', path: '/metrics', operationId: 'metrics', tag: 'Service', summary: 'Prometheus metrics',
      description: 'Prometheus text exposition. With `METRICS_TOKEN` set, send `Authorization: Bearer <METRICS_TOKEN>`; unset, it is open.',
      responses: { 200: { description: 'Metrics.', content: { type: 'text/plain', schema: { type: 'string' } } } },
      errors: { 401: '`Missing metrics token` / `Invalid metrics token` (only when `METRICS_TOKEN` is set).' },
    },
    {
      method: 'get', path: '/openapi.json', operationId: 'getOpenApi', tag: 'Service', summary: 'This document',
      responses: { 200: { description: 'OpenAPI 3.1.', content: { type: 'application/json', schema: { type: 'object' } } } },
    },
    {
      method: 'get', path: '/docs', operationId: 'docsPage', tag: 'Service', summary: 'API reference page',
      description: 'This document rendered by Swagger UI, served from this service (no external assets).',
      responses: { 200: { description: 'HTML.', content: { type: 'text/html', schema: { type: 'string' } } } },
    },
  ];
}

const webhookHeader = (name: string, description: string): Json => ({ name, in: 'header', required: true, description, schema: { type: 'string' } });

/** Deliveries the service sends (OpenAPI 3.1 `webhooks`). */
export const webhooks = (): Json => ({
  deviceStatus: {
    post: {
      operationId: 'deviceStatusWebhook',
      tags: ['Webhooks'],
      summary: 'A device went offline or came back online',
      description:
        'POSTed to a hook’s `target_url`, signed per the Standard Webhooks specification: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes of the hook’s `secret`. Redirects are not followed.',
      parameters: [
        webhookHeader('webhook-id', 'The same on every retry of one event to one hook: dedupe on it.'),
        webhookHeader('webhook-timestamp', 'Unix seconds of this attempt.'),
        webhookHeader('webhook-signature', '`v1,<base64 signature>`.'),
      ],
      // The receiver authenticates the sender by the signature headers, not a security scheme.
      security: [],
      requestBody: { required: true, content: { 'application/json': { schema: schemaRef(WebhookDelivery) } } },
      responses: {
        '2XX': { description: 'Delivered; never sent again.' },
        '410': { description: 'The hook is disabled and gets nothing more.' },
        default: { description: 'Anything else (or a timeout) is retried per `WEBHOOK_RETRY_SCHEDULE_MS` or a longer `Retry-After`; after the last retry the delivery is dead.' },
      },
    },
  },
});

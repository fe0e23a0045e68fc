import { z } from 'zod';
import type { KeyHeaders, Scope } from '../auth/authenticate.js';
import type { Manifest, OptionSource } from '../manifest/schema.js';
import { resources } from '../options/resources.js';
import type { ParamsSchema } from '../http/query.js';
import {
  deviceListQuery,
  deviceParams,
  eventsQuery,
  formatsOf,
  groupsQuery,
  hookBody,
  hookParams,
  optionParams,
  optionQuery,
  triggerQuery,
} from '../http/schemas.js';
import {
  apiSchemas,
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

/**
 * The OpenAPI 3.1 document of the service, generated from the zod schemas the routes
 * validate with (src/http/schemas.ts) and the response schemas (src/http/responses.ts).
 * Option routes come from the manifest's option sources, exactly as the routes do.
 * test/integration/openapi.test.ts checks that every registered route is here and that real
 * responses match what is documented.
 */

type Json = Record<string, unknown>;

/** One documented response: a registered schema (JSON), raw content, or none (204/304). */
interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** A literal schema for non-registered content (e.g. the OpenAPI document itself). */
  content?: { type: string; schema: Json };
  headers?: Record<string, Json>;
}

type ErrorStatus = 400 | 401 | 403 | 404 | 413 | 415 | 429 | 502 | 504;

interface OperationSpec {
  method: 'get' | 'post' | 'delete';
  /** OpenAPI form, `{param}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Which key headers the route reads and the scopes it needs; absent = no key. */
  auth?: { headers: KeyHeaders; scopes: Scope[] };
  params?: ParamsSchema;
  query?: ParamsSchema;
  extraParameters?: Json[];
  body?: z.ZodType;
  responses: Record<number, ResponseSpec>;
  /** Error statuses beyond the ones implied by auth and parameters, with what they mean. */
  errors?: Partial<Record<ErrorStatus, string>>;
}

// ---- JSON Schema from zod ----

const maxSafe = Number.MAX_SAFE_INTEGER;

/** Drops what carries no information: `$schema`/`$id` of a nested schema, the safe-integer bounds of `.int()`. */
function tidy(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(tidy);
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$schema' || key === '$id') continue;
    if ((key === 'maximum' && value === maxSafe) || (key === 'minimum' && value === -maxSafe)) continue;
    out[key] = tidy(value);
  }
  return out;
}

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Json {
  return tidy(z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'throw' })) as Json;
}

/** Every registered response schema, as `components.schemas`. */
function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(apiSchemas, {
    target: 'draft-2020-12',
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
  });
  if ('__shared' in schemas) throw new Error('openapi: a response schema needs an id (shared definitions are not emitted)');
  return tidy(schemas) as Json;
}

/**
 * Parameters from a zod object: the output side of each field (what the route works with:
 * integers, booleans, lists), its description lifted to the parameter. Lists are
 * comma-separated (`style: form, explode: false`); repeating the parameter works too.
 */
function parametersOf(schema: ParamsSchema, location: 'query' | 'path'): Json[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const { description, ...fieldSchema } = jsonSchema(field as z.ZodType, 'output');
    const required = location === 'path' || !(field as z.ZodType).safeParse(undefined).success;
    const parameter: Json = { name, in: location, required };
    if (description !== undefined) parameter.description = description;
    if (fieldSchema.type === 'array') Object.assign(parameter, { style: 'form', explode: false });
    parameter.schema = fieldSchema;
    return parameter;
  });
}

// ---- Shared pieces ----

const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };

const defaultErrorText: Record<ErrorStatus, string> = {
  400: 'A bad parameter or body: `message` names the first, `details` lists every one.',
  401: '`Missing API key` or `Invalid API key`.',
  403: '`Invalid scopes`: the key lacks the scope.',
  404: 'Not found.',
  413: '`Request body is too large`.',
  415: '`Unsupported request body encoding`.',
  429: '`Too many requests`: 20 failed key attempts from this client within a minute.',
  502: '`Upstream unavailable` (upstream mode).',
  504: '`Upstream timeout` (upstream mode).',
};

function errorResponse(status: ErrorStatus, description: string, spec: OperationSpec): Json {
  const headers: Json = { ...requestIdHeader };
  if (status === 401 && spec.auth?.headers === 'bearer') headers['WWW-Authenticate'] = { $ref: '#/components/headers/WWWAuthenticate' };
  if (status === 429 || status === 502) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
  return { description, headers, content: errorContent };
}

function security(auth: OperationSpec['auth']): Json[] {
  if (!auth) return [];
  const apiKey = { ApiKeyHeader: auth.scopes };
  const bearer = { BearerAuth: auth.scopes };
  if (auth.headers === 'bearer') return [bearer];
  if (auth.headers === 'x-api-key') return [apiKey];
  return [apiKey, bearer];
}

function keyText(auth: OperationSpec['auth']): string {
  if (!auth) return 'No key needed.';
  const header = { bearer: '`Authorization: Bearer <key>`', 'x-api-key': '`X-API-Key: <key>`', either: '`X-API-Key: <key>` or `Authorization: Bearer <key>`' }[auth.headers];
  const scopes = auth.scopes.length > 0 ? `scope ${auth.scopes.map((s) => `\`${s}\``).join(' and ')}` : 'no scope';
  return `Key: ${header}; ${scopes}.`;
}

function operation(spec: OperationSpec): Json {
  const parameters = [
    ...(spec.params ? parametersOf(spec.params, 'path') : []),
    ...(spec.query ? parametersOf(spec.query, 'query') : []),
    ...(spec.extraParameters ?? []),
  ];
  const responses: Json = {};
  for (const [status, response] of Object.entries(spec.responses)) {
    const out: Json = { description: response.description, headers: { ...requestIdHeader, ...response.headers } };
    if (response.schema) out.content = { 'application/json': { schema: schemaRef(response.schema) } };
    if (response.content) out.content = { [response.content.type]: { schema: response.content.schema } };
    responses[status] = out;
  }
  const errors: Partial<Record<ErrorStatus, string>> = {};
  if (parameters.length > 0 || spec.body) errors[400] = defaultErrorText[400];
  if (spec.auth) {
    errors[401] = defaultErrorText[401];
    if (spec.auth.scopes.length > 0) errors[403] = defaultErrorText[403];
    errors[429] = defaultErrorText[429];
    errors[502] = defaultErrorText[502];
    errors[504] = defaultErrorText[504];
  }
  Object.assign(errors, spec.errors);
  for (const status of Object.keys(errors).map(Number).sort() as ErrorStatus[]) {
    responses[status] = errorResponse(status, errors[status]!, spec);
  }
  const op: Json = {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: [spec.description, keyText(spec.auth)].filter(Boolean).join('\n\n'),
    security: security(spec.auth),
  };
  if (parameters.length > 0) op.parameters = parameters;
  if (spec.body) {
    op.requestBody = { required: true, content: { 'application/json': { schema: jsonSchema(spec.body, 'input') } } };
  }
  op.responses = responses;
  return op;
}

// ---- The operations ----

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

function operations(manifest: Manifest): OperationSpec[] {
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
      description: 'Events built from the key’s own devices, each with `"sample": true`, for a platform’s set-up screen.',
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
      auth: { headers: 'either', scopes: ['hooks:write', 'device:read'] }, body: hookBody,
      responses: {
        201: { description: 'Subscribed.', schema: NewHook },
        200: { description: 'The same subscription already existed.', schema: NewHook },
      },
      errors: { 413: defaultErrorText[413], 415: defaultErrorText[415] },
    },
    {
      method: 'get', path: '/v1/hooks', operationId: 'listHooks', tag: 'Webhooks', summary: 'List webhooks',
      auth: hookAuth,
      responses: { 200: { description: 'The key’s hooks (no secrets).', schema: HookList } },
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
      description: 'For platforms and integrators; URLs are absolute (`PUBLIC_URL`, or taken from the request).',
      responses: { 200: { description: 'The manifest.', schema: ConnectorManifest } },
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
const webhooks = (): Json => ({
  deviceStatus: {
    post: {
      summary: 'A device went offline or came back online',
      description:
        'POSTed to a hook’s `target_url`, signed per the Standard Webhooks specification: `webhook-signature` is `v1,` + base64 HMAC-SHA256 of `{webhook-id}.{webhook-timestamp}.{body}`, keyed with the bytes of the hook’s `secret`. Redirects are not followed.',
      parameters: [
        webhookHeader('webhook-id', 'The same on every retry of one event to one hook: dedupe on it.'),
        webhookHeader('webhook-timestamp', 'Unix seconds of this attempt.'),
        webhookHeader('webhook-signature', '`v1,<base64 signature>`.'),
      ],
      requestBody: { required: true, content: { 'application/json': { schema: schemaRef(WebhookDelivery) } } },
      responses: {
        '2XX': { description: 'Delivered; never sent again.' },
        '410': { description: 'The hook is disabled and gets nothing more.' },
        default: { description: 'Anything else (or a timeout) is retried per `WEBHOOK_RETRY_SCHEDULE_MS` or a longer `Retry-After`; after the last retry the delivery is dead.' },
      },
    },
  },
});

/** The document without `servers` (those depend on the request); build once, reuse. */
export function buildOpenApiDocument(manifest: Manifest): Json {
  const paths: Record<string, Json> = {};
  for (const spec of operations(manifest)) {
    (paths[spec.path] ??= {})[spec.method] = operation(spec);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: manifest.name,
      version: manifest.version,
      description: [
        manifest.description,
        'Errors are JSON `{"message"}`; validation errors add `"details": [{"path", "message"}]` naming every bad parameter. Unknown query parameters are ignored; a repeated scalar parameter is a 400. An unexpected error is a 500 `{"message":"Internal error"}`.',
        'Every response carries `X-Request-Id` (a well-formed incoming one is kept).',
        'Machine-readable description for automation platforms: `GET /v1/manifest`.',
      ].join('\n\n'),
    },
    servers: [],
    tags: [
      { name: 'Devices', description: 'The device area (seed 4.1): `Authorization: Bearer`.' },
      { name: 'Menus', description: 'The menu area (seed 4.2): `X-API-Key`.' },
      { name: 'Options', description: 'Dropdown options, declared as option sources in the manifest.' },
      { name: 'Account', description: 'The auth test.' },
      { name: 'Triggers', description: 'Device-status events: polling trigger, samples, replay.' },
      { name: 'Webhooks', description: 'REST-hook subscriptions and their deliveries.' },
      { name: 'Service', description: 'Health, readiness, manifest, this reference.' },
    ],
    paths,
    webhooks: webhooks(),
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        ApiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'Everything under `/v1`.' },
        BearerAuth: { type: 'http', scheme: 'bearer', description: 'The device area; also accepted by `/v1/me`, device options, triggers, events and hooks.' },
      },
      headers: {
        RequestId: { description: 'The request id, also sent upstream.', schema: { type: 'string' } },
        RetryAfter: { description: 'Seconds to wait.', schema: { type: 'integer', minimum: 0 } },
        WWWAuthenticate: { description: '`Bearer` (device area).', schema: { type: 'string' } },
      },
    },
  };
}

/** The document for one base URL. */
export function openApiDocument(base: Json, serverUrl: string): Json {
  return { ...base, servers: [{ url: serverUrl }] };
}

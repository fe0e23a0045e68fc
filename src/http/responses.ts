import { z } from 'zod';
import { eventTypeTuple, Event, hookEventTypeTuple } from '../catalog/event.js';
import { component, timestamp } from '../catalog/registry.js';

/**
 * The answer shapes of the connector's own endpoints, as zod schemas registered under the names
 * the OpenAPI document gives them. The catalog's shapes (Device, Menu, Group, Item, Event) live in
 * src/catalog/; test/integration/openapi.test.ts checks real responses against all of them.
 */
export { apiSchemas, schemaRef } from '../catalog/registry.js';
export { Device, DevicePage } from '../catalog/device.js';
export { Menu, MenuList, Item, Group, GroupList } from '../catalog/menu.js';
export { Event, EventList, SampleEventList } from '../catalog/event.js';

// ---- Errors (docs/api.md) ----

export const ErrorBody = component(
  'Error',
  z.strictObject({
    message: z.string().describe('What went wrong, e.g. `Device not found`; for a 400 the first problem.'),
    details: z
      .array(z.strictObject({ path: z.string().describe('The parameter or JSON path.'), message: z.string() }))
      .optional()
      .describe('Validation errors only: one entry per bad parameter or field.'),
  }),
);

// ---- Options (docs/options.md) ----

export const OptionTuples = component(
  'OptionTuples',
  z.array(z.tuple([z.string().describe('label'), z.string().describe('value')])).describe('`format=tuples` (default): `[[label, value]]`.'),
);

export const OptionObjects = component(
  'OptionObjects',
  z.array(z.strictObject({ label: z.string(), value: z.string() })).describe('`format=objects`: `[{label, value}]`.'),
);

export const OptionN8n = component(
  'OptionN8n',
  z
    .strictObject({
      results: z.array(z.strictObject({ name: z.string(), value: z.string() })),
      paginationToken: z.string().optional().describe('The next page: send it back as `cursor`.'),
    })
    .describe('`format=n8n`: n8n `listSearch` results.'),
);

export const OptionTree = component(
  'OptionTree',
  z
    .array(z.tuple([z.string().describe('name'), z.string().describe('value'), z.null(), z.boolean().describe('hasChildren')]))
    .describe('`format=tree`: one level, `[[name, value, null, hasChildren]]`.'),
);

/** The response schema of a format name. */
export const optionBodies = { tuples: OptionTuples, objects: OptionObjects, n8n: OptionN8n, tree: OptionTree } as const;

// ---- Auth test (docs/service.md) ----

const scope = z.enum(['device:read', 'menu:read', 'hooks:write']);

export const Me = component(
  'Me',
  z.union([
    z
      .strictObject({
        key: z.strictObject({ id: z.string(), name: z.string(), scopes: z.array(scope) }),
        account: z.strictObject({ id: z.string(), name: z.string() }),
      })
      .describe('Embedded mode.'),
    z.strictObject({ key: z.strictObject({ scopes: z.null() }), account: z.null() }).describe('Upstream mode, once the upstream accepted the key.'),
  ]),
);

// ---- Webhook deliveries (docs/webhooks.md) ----

export const WebhookDelivery = component(
  'WebhookDelivery',
  z.strictObject({
    type: z.enum(eventTypeTuple),
    timestamp: timestamp.describe('The event’s `occurred_at`.'),
    data: Event,
  }),
);

// ---- Webhooks (docs/webhooks.md) ----

const hookFields = {
  id: z.string(),
  target_url: z.string(),
  events: z.array(z.enum(hookEventTypeTuple)),
  device_ids: z.array(z.string()).nullable().describe('null = every device the key can read.'),
  status: z.enum(['active', 'paused', 'disabled']),
  created_at: timestamp,
};

export const Hook = component(
  'Hook',
  z.strictObject({
    ...hookFields,
    status_reason: z.string().nullable().describe('Why a hook is paused or disabled.'),
  }),
);

export const HookList = component('HookList', z.array(Hook));

export const NewHook = component(
  'NewHook',
  z.strictObject({
    ...hookFields,
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]+=*$/)
      .describe('Standard Webhooks signing secret: `whsec_` + base64 of 32 random bytes. Shown only here.'),
  }),
);

const outcome = z.enum(['delivered', 'retrying', 'dead', 'disabled', 'failed']).describe('What the attempt came to (`failed`: a test delivery without a 2xx).');

export const Delivery = component(
  'Delivery',
  z.strictObject({
    delivery_id: z.string().describe('`dlv_…`: the same for every attempt of one event to one hook.'),
    event_id: z.string(),
    event_type: z.string().describe('`device.offline`, `device.online`, or `webhook.test`.'),
    webhook_id: z.string().describe('The `webhook-id` header, the same on every attempt.'),
    attempt: z.number().int().min(0).describe('The number of its latest attempt; 0 before the first.'),
    status_code: z.number().int().nullable().describe('Of the latest attempt; null when no HTTP answer came (or none was made).'),
    error: z.string().nullable(),
    duration_ms: z.number().int().min(0).nullable(),
    attempted_at: timestamp.nullable().describe('When the latest attempt was made; null before the first.'),
    next_attempt_at: timestamp.nullable().describe('When it is due next, while pending or held.'),
    outcome: outcome.nullable().describe('What the latest attempt came to; null before the first.'),
    delivery_status: z
      .enum(['pending', 'held', 'delivered', 'dead', 'cancelled', 'failed'])
      .describe('`held`: pending while its hook is disabled. `cancelled`: queued when the receiver answered 410. `failed`: a test delivery without a 2xx.'),
  }),
);

export const DeliveryList = component('DeliveryList', z.array(Delivery).describe('Newest first.'));

export const DeliveryDetail = component(
  'DeliveryDetail',
  Delivery.extend({
    attempts_dropped: z
      .number()
      .int()
      .min(0)
      .describe('Attempts no longer kept: the log keeps the first and the latest (20 in all by default); this many went between them.'),
    attempts: z
      .array(
        z.strictObject({
          attempt: z.number().int().min(1),
          attempted_at: timestamp,
          request_headers: z.record(z.string(), z.string()).nullable().describe('The headers sent, signature included (never the secret).'),
          status_code: z.number().int().nullable(),
          response_body: z.string().nullable().describe('The first 1,024 bytes of the answer\u2019s body, as text.'),
          duration_ms: z.number().int().min(0),
          error: z.string().nullable(),
          next_attempt_at: timestamp.nullable().describe('When the next attempt was due after this one.'),
          outcome,
        }),
      )
      .describe('The attempts kept (the first and the latest), oldest first.'),
  }),
);

export const TestDelivery = component(
  'TestDelivery',
  z.strictObject({
    delivered: z.boolean().describe('The receiver answered 2xx.'),
    status_code: z.number().int().nullable().describe('null when no answer came.'),
    duration_ms: z.number().int().min(0),
    error: z.string().nullable().describe('Why no answer came (timeout, refused, network).'),
  }),
);

export const RotatedSecret = component(
  'RotatedSecret',
  z.strictObject({
    secret: z
      .string()
      .regex(/^whsec_[A-Za-z0-9+/]+=*$/)
      .describe('The new signing secret, shown only here.'),
  }),
);

export const RecoverCount = component(
  'RecoverCount',
  z.strictObject({ count: z.number().int().min(0).describe('Deliveries queued again or made (or that would be, for a dry run).') }),
);

// ---- Service endpoints (docs/service.md) ----

export const Health = component('Health', z.strictObject({ status: z.literal('ok') }));

export const Readiness = component(
  'Readiness',
  z.strictObject({
    status: z.enum(['ready', 'not ready']),
    checks: z
      .record(z.string(), z.string())
      .describe('`ok`, or what is wrong, per check: `database`, and `device_upstream` / `menu_upstream` in upstream mode.'),
  }),
);

export const ConnectorManifest = component(
  'ConnectorManifest',
  z
    .looseObject({
      $schema: z.string().describe("The absolute URL of the manifest's JSON Schema on this service (`GET /v1/manifest/schema`)."),
      name: z.string(),
      version: z.string(),
      description: z.string(),
      baseUrl: z.string().describe('PUBLIC_URL, or taken from the request: every `path` is relative to it.'),
      auth: z.looseObject({}),
      optionSources: z.array(z.looseObject({ id: z.string(), path: z.string() })),
      triggers: z.array(z.looseObject({ id: z.string() })),
      rateLimits: z.looseObject({}),
    })
    .describe('`manifests/connector.json` with defaults filled in, `baseUrl` added and `$schema` absolute; it validates against the schema `$schema` names.'),
);
export * from './admin-responses.js';

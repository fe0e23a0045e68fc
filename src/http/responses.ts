import { z } from 'zod';
import { eventTypes, type EventType } from '../triggers/transitions.js';

/**
 * Every response body the service sends, as zod schemas registered under the names the
 * OpenAPI document gives them (`#/components/schemas/<id>`). They describe the output after
 * normalisation (an upstream's extra fields are never passed through), so objects are
 * strict, and test/integration/openapi.test.ts checks real responses against them.
 */
export const apiSchemas = z.registry<{ id: string }>();

function component<T extends z.ZodType>(id: string, schema: T): T {
  apiSchemas.add(schema, { id });
  return schema;
}

/** The OpenAPI reference to a registered schema. */
export function schemaRef(schema: z.ZodType): { $ref: string } {
  const id = apiSchemas.get(schema)?.id;
  if (!id) throw new Error('schemaRef: the schema is not registered in apiSchemas');
  return { $ref: `#/components/schemas/${id}` };
}

const eventTypeTuple = eventTypes as unknown as readonly [EventType, ...EventType[]];

const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
  .meta({ format: 'date-time', description: 'UTC, always six fractional digits: `2026-06-01T12:00:00.000000Z`.' });
const count = z.number().int().min(0);

// ---- Errors (CONTRACT 3) ----

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

// ---- Device area (seed 2.1, CONTRACT 4) ----

export const Device = component(
  'Device',
  z.strictObject({
    id: z.string().describe('Upper case in list output, lower case in single-device output and events.'),
    name: z.string(),
    timezone: z.string().describe('`<Area>/<Location>`.'),
    screen_resolution: z.string().describe('`<width>x<height>`.'),
    screen_orientation: z.string(),
    registered_at: timestamp,
    published_at: timestamp.nullable(),
    last_heartbeat_at: timestamp.nullable().describe('null = never sent one (and offline).'),
    is_online: z.boolean().describe('The last heartbeat is younger than `HEARTBEAT_TIMEOUT_MS` (5 minutes by default).'),
    offline_startup: z.boolean(),
    offline_startup_delay_minutes: z.number().int(),
    open_dev_tools: z.boolean(),
    display_connected: z.boolean(),
    connection_type: z.string(),
    wifi_ssid: z.string().nullable(),
    wifi_signal_strength: z.number().int().nullable(),
    updated_at: timestamp,
    created_at: timestamp,
  }),
);

export const DevicePage = component(
  'DevicePage',
  z.strictObject({
    total: count.describe('Every matching device, not just this page.'),
    data: z.array(Device),
  }),
);

// ---- Menu area (seed 2.2–2.4, CONTRACT 5) ----

export const Menu = component(
  'Menu',
  z.strictObject({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    tags: z.array(z.string()),
    metadata: z.strictObject({ groups: z.strictObject({ total: count.describe('Top-level groups.') }) }),
  }),
);

export const MenuList = component(
  'MenuList',
  z.strictObject({
    metadata: z.strictObject({ menus: z.strictObject({ total: count }) }),
    menus: z.array(Menu),
  }),
);

interface ItemShape {
  metadata: { items: { total: number } };
  id: string;
  name: string;
  description: string | null;
  price: number | null;
  calories: number | null;
  tags: string[];
  inStock: boolean;
  items: ItemShape[];
}

interface GroupShape {
  metadata: { groups: { total: number }; items: { total: number } };
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  groups: GroupShape[];
  items: ItemShape[];
}

export const Item: z.ZodType<ItemShape> = component(
  'Item',
  z.strictObject({
    metadata: z.strictObject({ items: z.strictObject({ total: count }) }),
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    price: z.number().nullable(),
    calories: z.number().nullable(),
    tags: z.array(z.string()),
    inStock: z.boolean(),
    get items(): z.ZodArray<z.ZodType<ItemShape>> {
      return z.array(Item);
    },
  }),
);

export const Group: z.ZodType<GroupShape> = component(
  'Group',
  z.strictObject({
    metadata: z.strictObject({ groups: z.strictObject({ total: count }), items: z.strictObject({ total: count }) }),
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    tags: z.array(z.string()),
    get groups(): z.ZodArray<z.ZodType<GroupShape>> {
      return z.array(Group);
    },
    get items(): z.ZodArray<z.ZodType<ItemShape>> {
      return z.array(Item);
    },
  }),
);

export const GroupList = component(
  'GroupList',
  z.strictObject({
    metadata: z.strictObject({ groups: z.strictObject({ total: count }) }),
    groups: z.array(Group),
  }),
);

// ---- Options (CONTRACT 6.1) ----

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

// ---- Auth test (CONTRACT 6.2) ----

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
    z
      .strictObject({ key: z.strictObject({ scopes: z.null() }), account: z.null() })
      .describe('Upstream mode, once the upstream accepted the key.'),
  ]),
);

// ---- Device-status events (CONTRACT 6.3) ----

const status = z.enum(['online', 'offline']);

export const Event = component(
  'Event',
  z.strictObject({
    id: z.string().describe('Deterministic: the same device, type and heartbeat give the same id.'),
    type: z.enum(eventTypeTuple),
    occurred_at: timestamp.describe('Offline: last heartbeat + timeout. Online: the heartbeat that ended the gap.'),
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

export const WebhookDelivery = component(
  'WebhookDelivery',
  z.strictObject({
    type: z.enum(eventTypeTuple),
    timestamp: timestamp.describe('The event’s `occurred_at`.'),
    data: Event,
  }),
);

// ---- Webhooks (CONTRACT 6.4) ----

const hookFields = {
  id: z.string(),
  target_url: z.string(),
  events: z.array(z.enum(eventTypeTuple)),
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

export const DeliveryAttempt = component(
  'DeliveryAttempt',
  z.strictObject({
    event_id: z.string(),
    webhook_id: z.string().describe('The `webhook-id` header, the same on every retry.'),
    attempt: z.number().int().min(1),
    status_code: z.number().int().nullable().describe('null when no HTTP answer came.'),
    error: z.string().nullable(),
    duration_ms: z.number().int().min(0),
    attempted_at: timestamp,
    next_attempt_at: timestamp.nullable(),
    outcome: z.enum(['delivered', 'retrying', 'dead', 'disabled']),
    delivery_status: z.enum(['pending', 'delivered', 'dead', 'cancelled']),
  }),
);

export const DeliveryAttemptList = component(
  'DeliveryAttemptList',
  z.array(DeliveryAttempt).describe('The latest 100 attempts, newest first.'),
);

// ---- Service endpoints (CONTRACT 6.5) ----

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
      $schema: z.string().describe('The absolute URL of the manifest\'s JSON Schema on this service (`GET /v1/manifest/schema`).'),
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

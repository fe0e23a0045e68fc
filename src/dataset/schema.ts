import { z } from 'zod';
import { parseTimestamp } from '../time/timestamps.js';
import { isWellFormedKey } from '../auth/keys.js';

/**
 * The dataset file format (docs/datasets.md, `docs/examples/dataset.example.json`). Objects are strict so a typo
 * (`in_stock`) is an error, not silently dropped data; fields the service derives (`metadata`,
 * `is_online`) are accepted and ignored, so an export of the device interface's own output imports too.
 */

const id = z.string().trim().min(1, 'must be a non-empty string').max(200, 'must be at most 200 characters');
const name = z.string().min(1, 'must be a non-empty string').max(500, 'must be at most 500 characters');
const text = z.string().max(10_000, 'must be at most 10000 characters');

export const timestampText = z
  .string()
  .refine((value) => parseTimestamp(value, 0) !== null, 'must be an ISO 8601 timestamp with a zone, or now, now-90s, now+2h, …');

const tags = z.array(z.string().min(1).max(200)).max(200).default([]);

export const scopeSchema = z.enum(['device:read', 'menu:read', 'hooks:write']);

const accountSchema = z.strictObject({ id, name });
const userSchema = z.strictObject({ id, account_id: id, name });

const apiKeySchema = z
  .strictObject({
    id,
    user_id: id,
    name,
    scopes: z.array(scopeSchema).max(10),
    key: z.string().refine(isWellFormedKey, 'must be 16-256 printable ASCII characters without spaces').optional(),
    key_sha256: z
      .string()
      .regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hex digits')
      .transform((hex) => hex.toLowerCase())
      .optional(),
    expires_at: timestampText.nullable().optional(),
    rate_limit_per_minute: z.number().int('must be an integer').min(1, 'must be at least 1').max(10_000_000, 'must be at most 10000000').nullable().optional(),
  })
  .refine((k) => (k.key === undefined) !== (k.key_sha256 === undefined), {
    message: 'exactly one of key and key_sha256 must be given',
  });

const accessSchema = z.strictObject({ user_id: id, level: z.enum(['read', 'update']) });

const deviceSchema = z.strictObject({
  id: id.regex(/^[\x21-\x7E]+$/, 'must be printable ASCII without spaces'),
  name,
  timezone: z.string().regex(/^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)+$|^UTC$/, 'must be a time zone name like Europe/Paris'),
  screen_resolution: z.string().regex(/^\d{1,5}x\d{1,5}$/, 'must be <width>x<height>'),
  screen_orientation: z.string().min(1).max(50),
  registered_at: timestampText,
  published_at: timestampText.nullable().default(null),
  last_heartbeat_at: timestampText.nullable().default(null),
  is_online: z.boolean().optional(),
  offline_startup: z.boolean(),
  offline_startup_delay_minutes: z.number().int().min(0),
  open_dev_tools: z.boolean(),
  display_connected: z.boolean(),
  connection_type: z.string().min(1).max(50),
  wifi_ssid: z.string().max(200).nullable().default(null),
  wifi_signal_strength: z.number().int().nullable().default(null),
  updated_at: timestampText,
  created_at: timestampText,
  access: z.array(accessSchema).default([]),
});

export interface ItemInput {
  id: string;
  name: string;
  description: string | null;
  price: number | null;
  calories: number | null;
  tags: string[];
  inStock: boolean;
  items: ItemInput[];
}

export interface GroupInput {
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  groups: GroupInput[];
  items: ItemInput[];
}

const itemSchema: z.ZodType<ItemInput, unknown> = z.lazy(() =>
  z.strictObject({
    metadata: z.unknown().optional(),
    id,
    name,
    description: text.nullable().default(null),
    price: z.number().finite().nullable().default(null),
    calories: z.number().finite().nullable().default(null),
    tags,
    inStock: z.boolean(),
    items: z.array(itemSchema).default([]),
  }),
) as unknown as z.ZodType<ItemInput, unknown>;

const groupSchema: z.ZodType<GroupInput, unknown> = z.lazy(() =>
  z.strictObject({
    metadata: z.unknown().optional(),
    id,
    name,
    description: text.nullable().default(null),
    tags,
    groups: z.array(groupSchema).default([]),
    items: z.array(itemSchema).default([]),
  }),
) as unknown as z.ZodType<GroupInput, unknown>;

const menuSchema = z.strictObject({
  metadata: z.unknown().optional(),
  id,
  account_id: id,
  name,
  description: text.nullable().default(null),
  tags,
  groups: z.array(groupSchema).default([]),
});

export const datasetSchema = z.strictObject({
  $schema: z.string().optional(),
  accounts: z.array(accountSchema).default([]),
  users: z.array(userSchema).default([]),
  api_keys: z.array(apiKeySchema).default([]),
  devices: z.array(deviceSchema).default([]),
  menus: z.array(menuSchema).default([]),
});

export type Dataset = z.infer<typeof datasetSchema>;
export type DeviceInput = Dataset['devices'][number];
export type MenuInput = Dataset['menus'][number];

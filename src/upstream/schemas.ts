import { z } from 'zod';
import { groupNestingIssue } from '../dataset/nesting.js';
import { tolerantArray, tolerate } from './rejected.js';
import { canonicalIso } from '../time/timestamps.js';
import { toGroup } from '../dataset/import.js';
import type { GroupInput, ItemInput } from '../dataset/schema.js';
import type { Device } from '../catalog/device.js';
import type { Group, Menu } from '../catalog/menu.js';
import type { DevicePage } from '../catalog/source-queries.js';

/**
 * What the connector accepts from an upstream that serves the device and menu interface (docs/upstream.md). Strict
 * where the interface is explicit (device fields and types), tolerant where it says "not shown"
 * (menu records, the `/v1/menus` envelope). Timestamps are normalised to six fractional
 * digits, keeping microseconds; device ids are kept lower case internally; `metadata`
 * totals are recomputed so they always equal their arrays.
 */

/** Absolute only (never `now-10m`), with the calendar checked whatever the form (src/time/timestamps.ts). */
const timestamp = z.string().transform((value, ctx) => {
  const canonical = canonicalIso(value);
  if (canonical === null) {
    ctx.addIssue({ code: 'custom', message: 'not an ISO 8601 timestamp' });
    return z.NEVER;
  }
  return canonical;
});

export const deviceSchema: z.ZodType<Device, unknown> = z.object({
  id: z
    .string()
    .min(1)
    .transform((id) => id.toLowerCase()),
  name: z.string(),
  timezone: z.string(),
  screen_resolution: z.string(),
  screen_orientation: z.string(),
  registered_at: timestamp,
  published_at: timestamp.nullable(),
  last_heartbeat_at: timestamp.nullable(),
  is_online: z.boolean(),
  offline_startup: z.boolean(),
  offline_startup_delay_minutes: z.number().int(),
  open_dev_tools: z.boolean(),
  display_connected: z.boolean(),
  connection_type: z.string(),
  wifi_ssid: z.string().nullable(),
  wifi_signal_strength: z.number().int().nullable(),
  updated_at: timestamp,
  created_at: timestamp,
}) as z.ZodType<Device, unknown>;

/**
 * A device that does not match is left out of the page (`total` stays the upstream's count);
 * its id, when it has one, is in `unreadable`, so the poller can tell it from a device gone, and
 * `listed` counts every record the page held (a page is not short for a record left out).
 */
export const devicePageSchema: z.ZodType<DevicePage, unknown> = z
  .object({ total: z.number().int().min(0), data: z.array(z.unknown()) })
  .transform(({ total, data }) => {
    const { kept, leftOutIds } = tolerate(deviceSchema, 'device', data);
    if (kept.length === data.length) return { total, data: kept };
    return { total, data: kept, unreadable: leftOutIds.map((id) => id.toLowerCase()), listed: data.length };
  });

const itemSchema: z.ZodType<ItemInput, unknown> = z.lazy(() =>
  z.object({
    id: z.string().min(1),
    name: z.string(),
    description: z.string().nullable().default(null),
    price: z.number().nullable().default(null),
    calories: z.number().nullable().default(null),
    tags: z.array(z.string()).default([]),
    inStock: z.boolean(),
    items: z.array(itemSchema).default([]),
  }),
) as unknown as z.ZodType<ItemInput, unknown>;

const groupSchema: z.ZodType<GroupInput, unknown> = z.lazy(() =>
  z.object({
    id: z.string().min(1),
    name: z.string(),
    description: z.string().nullable().default(null),
    tags: z.array(z.string()).default([]),
    groups: tolerantArray(groupSchema, 'group').default([]),
    items: z.array(itemSchema).default([]),
  }),
) as unknown as z.ZodType<GroupInput, unknown>;

/** Nesting past the limits (src/dataset/nesting.ts) is refused before the recursive schema runs. */
export const groupsEnvelopeSchema: z.ZodType<Group[], unknown> = z
  .unknown()
  .superRefine((body, ctx) => {
    const groups = body !== null && typeof body === 'object' ? (body as { groups?: unknown }).groups : undefined;
    const issue = groupNestingIssue(groups, ['groups']);
    if (issue) ctx.addIssue({ code: 'custom', path: issue.path, message: issue.message, fatal: true });
  })
  .pipe(z.object({ groups: tolerantArray(groupSchema, 'group') }))
  .transform((body) => body.groups.map(toGroup));

const menuRecord = z.object({
  id: z.string().min(1),
  name: z.string(),
  description: z.string().nullable().default(null),
  tags: z.array(z.string()).default([]),
  metadata: z.object({ groups: z.object({ total: z.number().int().min(0) }) }).optional(),
});

export type UpstreamMenu = Omit<Menu, 'metadata'> & { metadata?: Menu['metadata'] };

/** `/v1/menus` answers an array, or an object holding one (`menus`, `data` or `items`). */
const menuList = tolerantArray(menuRecord, 'menu');
export const menusSchema: z.ZodType<UpstreamMenu[], unknown> = z.union([
  menuList,
  z.object({ menus: menuList }).transform((b) => b.menus),
  z.object({ data: menuList }).transform((b) => b.data),
  z.object({ items: menuList }).transform((b) => b.items),
]);

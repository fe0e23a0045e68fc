import { randomInt } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { chunks, inChunks } from '../db/chunks.js';
import { hashKey, keyPrefix } from '../auth/keys.js';
import { importKeys } from '../auth/key-store.js';
import { formatMicros, parseTimestamp } from '../time/timestamps.js';
import type { Group, Item } from '../catalog/menu.js';
import { fold, labelValueKey } from '../text/label-order.js';
import { menuGroupRows } from '../db/group-rows.js';
import type { Dataset, GroupInput, ItemInput } from './schema.js';

/** Writing a validated dataset: upserts by id, and with `--prune` deletes of what it lacks. */

export type EntityCounts = Record<'accounts' | 'users' | 'api_keys' | 'devices' | 'menus', number>;

export function emptyCounts(): EntityCounts {
  return { accounts: 0, users: 0, api_keys: 0, devices: 0, menus: 0 };
}

export function countsOf(dataset: Dataset): EntityCounts {
  return {
    accounts: dataset.accounts.length,
    users: dataset.users.length,
    api_keys: dataset.api_keys.length,
    devices: dataset.devices.length,
    menus: dataset.menus.length,
  };
}

export async function pruneMissing(trx: Kysely<Tables>, dataset: Dataset): Promise<EntityCounts> {
  const prune = async (table: 'api_keys' | 'devices' | 'menus' | 'users' | 'accounts', keep: string[]): Promise<number> => {
    const kept = new Set(keep);
    const missing = (await trx.selectFrom(table).select('id').execute()).map((r) => r.id).filter((id) => !kept.has(id));
    const deleted = await inChunks(missing, async (ids) => [Number((await trx.deleteFrom(table).where('id', 'in', ids).executeTakeFirst()).numDeletedRows)]);
    return deleted.reduce((a, b) => a + b, 0);
  };
  // Children first, so each count is what that table lost on its own account.
  const api_keys = await prune(
    'api_keys',
    dataset.api_keys.map((k) => k.id),
  );
  const devices = await prune(
    'devices',
    dataset.devices.map((d) => d.id.toLowerCase()),
  );
  const menus = await prune(
    'menus',
    dataset.menus.map((m) => m.id),
  );
  const users = await prune(
    'users',
    dataset.users.map((u) => u.id),
  );
  const accounts = await prune(
    'accounts',
    dataset.accounts.map((a) => a.id),
  );
  // Returned in the same key order as `upserted`, so the CLI prints both lines alike.
  return { accounts, users, api_keys, devices, menus };
}

/** Multi-row writes a slice at a time, within both engines' bound-parameter limits. */
async function inserts<T>(rows: T[], write: (part: T[]) => Promise<unknown>): Promise<void> {
  for (const part of chunks(rows)) await write(part);
}

export async function writeDataset(trx: Kysely<Tables>, dataset: Dataset, nowMs: number): Promise<void> {
  const ts = (value: string): string => formatMicros(parseTimestamp(value, nowMs)!);
  const tsOrNull = (value: string | null): string | null => (value === null ? null : ts(value));
  await inserts(dataset.accounts, (part) =>
    trx
      .insertInto('accounts')
      .values(part.map(({ id, name }) => ({ id, name })))
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ name: eb.ref('excluded.name') })))
      .execute(),
  );
  await inserts(dataset.users, (part) =>
    trx
      .insertInto('users')
      .values(part.map(({ id, account_id, name }) => ({ id, account_id, name })))
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ account_id: eb.ref('excluded.account_id'), name: eb.ref('excluded.name') })))
      .execute(),
  );
  await inserts(dataset.api_keys, (part) =>
    importKeys(
      trx,
      part.map((key) => ({
        id: key.id,
        user_id: key.user_id,
        name: key.name,
        key_sha256: key.key_sha256 ?? hashKey(key.key!),
        prefix: key.key === undefined ? null : keyPrefix(key.key),
        scopes: JSON.stringify([...new Set(key.scopes)]),
        created_at: formatMicros(nowMs * 1000),
        expires_at: key.expires_at === undefined || key.expires_at === null ? null : ts(key.expires_at),
        rate_limit_per_minute: key.rate_limit_per_minute ?? null,
      })),
    ),
  );
  await writeDevices(trx, dataset.devices, ts, tsOrNull);
  await writeMenus(trx, dataset.menus);
}

const deviceColumns = [
  'name',
  'timezone',
  'screen_resolution',
  'screen_orientation',
  'registered_at',
  'published_at',
  'last_heartbeat_at',
  'offline_startup',
  'offline_startup_delay_minutes',
  'open_dev_tools',
  'display_connected',
  'connection_type',
  'wifi_ssid',
  'wifi_signal_strength',
  'updated_at',
  'created_at',
] as const;

async function writeDevices(
  trx: Kysely<Tables>,
  devices: Dataset['devices'],
  ts: (value: string) => string,
  tsOrNull: (value: string | null) => string | null,
): Promise<void> {
  const rows = devices.map((device) => ({
    id: device.id.toLowerCase(),
    name: device.name,
    timezone: device.timezone,
    screen_resolution: device.screen_resolution,
    screen_orientation: device.screen_orientation,
    registered_at: ts(device.registered_at),
    published_at: tsOrNull(device.published_at),
    last_heartbeat_at: tsOrNull(device.last_heartbeat_at),
    offline_startup: Number(device.offline_startup),
    offline_startup_delay_minutes: device.offline_startup_delay_minutes,
    open_dev_tools: Number(device.open_dev_tools),
    display_connected: Number(device.display_connected),
    connection_type: device.connection_type,
    wifi_ssid: device.wifi_ssid,
    wifi_signal_strength: device.wifi_signal_strength,
    updated_at: ts(device.updated_at),
    created_at: ts(device.created_at),
  }));
  await inserts(rows, (part) =>
    trx
      .insertInto('devices')
      .values(part)
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => Object.fromEntries(deviceColumns.map((c) => [c, eb.ref(`excluded.${c}`)]))))
      .execute(),
  );
  await inserts(rows, (part) =>
    trx
      .deleteFrom('device_access')
      .where(
        'device_id',
        'in',
        part.map((d) => d.id),
      )
      .execute(),
  );
  // The dropdown's sort key and search form of the device's label (docs/options.md, "Big accounts").
  const grants = devices.flatMap((device) => {
    const id = device.id.toLowerCase();
    const label = { sort_key: labelValueKey(device.name, id), folded: fold(device.name) };
    return device.access.map((a) => ({ device_id: id, user_id: a.user_id, level: a.level, registered_at: ts(device.registered_at), ...label }));
  });
  await inserts(grants, (part) => trx.insertInto('device_access').values(part).execute());
}

/**
 * A menu keeps its place in the source order when it is updated; new menus go after the
 * existing ones, in file order. Every write gets a fresh random revision, so the parsed-tree
 * memo of the menu source never mistakes a re-created menu for the one it replaced.
 */
async function writeMenus(trx: Kysely<Tables>, menus: Dataset['menus']): Promise<void> {
  for (const menu of menus) {
    const groups = menu.groups.map(toGroup);
    await trx
      .insertInto('menus')
      .values({
        id: menu.id,
        account_id: menu.account_id,
        position: sql<number>`(SELECT coalesce(max(position), -1) + 1 FROM menus)`,
        name: menu.name,
        description: menu.description,
        tags: JSON.stringify(menu.tags),
        groups_json: JSON.stringify(groups),
        revision: randomInt(1, 2 ** 47),
      })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          account_id: eb.ref('excluded.account_id'),
          name: eb.ref('excluded.name'),
          description: eb.ref('excluded.description'),
          tags: eb.ref('excluded.tags'),
          groups_json: eb.ref('excluded.groups_json'),
          revision: eb.ref('excluded.revision'),
        })),
      )
      .execute();
    // The group dropdown's rows (docs/options.md, "Big accounts"), rewritten with the menu.
    await trx.deleteFrom('menu_groups').where('menu_id', '=', menu.id).execute();
    await inserts(menuGroupRows(menu.id, groups), (part) => trx.insertInto('menu_groups').values(part).execute());
  }
}

/** Input group → the Group of docs/menus.md, with derived `metadata` totals, fields in its order. */
export function toGroup(input: GroupInput): Group {
  return {
    metadata: { groups: { total: input.groups.length }, items: { total: input.items.length } },
    id: input.id,
    name: input.name,
    description: input.description,
    tags: input.tags,
    groups: input.groups.map(toGroup),
    items: input.items.map(toItem),
  };
}

function toItem(input: ItemInput): Item {
  return {
    metadata: { items: { total: input.items.length } },
    id: input.id,
    name: input.name,
    description: input.description,
    price: input.price,
    calories: input.calories,
    tags: input.tags,
    inStock: input.inStock,
    items: input.items.map(toItem),
  };
}

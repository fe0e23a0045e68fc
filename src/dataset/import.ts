import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { sql, type Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import { hashKey } from '../auth/keys.js';
import { formatMicros, parseTimestamp } from '../time/timestamps.js';
import type { Group, Item } from '../sources/types.js';
import { datasetNestingIssues } from './nesting.js';
import { datasetSchema, type Dataset, type GroupInput, type ItemInput } from './schema.js';
import { checkReferences } from './references.js';
import { chunks, inChunks } from '../db/chunks.js';
import { locateJsonError } from './json-position.js';

export interface DatasetIssue {
  path: string;
  message: string;
}

/** A dataset that cannot be imported; nothing was written. */
export class DatasetError extends Error {
  constructor(
    message: string,
    readonly issues: DatasetIssue[],
  ) {
    super(message);
    this.name = 'DatasetError';
  }
}

export interface ImportOptions {
  prune?: boolean;
  /** Milliseconds since the epoch that relative timestamps (`now-10m`) are resolved against. */
  nowMs: number;
}

export type EntityCounts = Record<'accounts' | 'users' | 'api_keys' | 'devices' | 'menus', number>;

export interface ImportSummary {
  upserted: EntityCounts;
  pruned: EntityCounts;
}

/** `devices[3].access[0].user_id` from a zod issue path. */
export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((out, part) => {
    if (typeof part === 'number') return `${out}[${part}]`;
    return out ? `${out}.${String(part)}` : String(part);
  }, '') || '$';
}

function zodIssues(error: z.ZodError): DatasetIssue[] {
  return error.issues.flatMap((issue) =>
    // zod reports unknown fields at the enclosing object; name each field's own path instead
    // (`menus[0].groups[0].items[0].in_stock`), so the path points at the typo.
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: jsonPath([...issue.path, key]), message: `unknown field "${key}"` }))
      : [{ path: jsonPath(issue.path), message: issue.message }],
  );
}

/** Parses and validates a dataset document; throws DatasetError with JSON paths. */
export function parseDataset(document: unknown): Dataset {
  // Before the schema: its recursive walk is only safe on trees of bounded depth.
  const tooDeep = datasetNestingIssues(document).map((issue) => ({ path: jsonPath(issue.path), message: issue.message }));
  if (tooDeep.length > 0) throw new DatasetError(`Invalid dataset: ${tooDeep.length} problem(s)`, tooDeep);
  const parsed = datasetSchema.safeParse(document);
  if (!parsed.success) {
    const issues = zodIssues(parsed.error);
    throw new DatasetError(`Invalid dataset: ${issues.length} problem(s)`, issues);
  }
  return parsed.data;
}

export function readDatasetFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new DatasetError(`Cannot read dataset ${file}: ${(err as Error).message}`, []);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const at = locateJsonError(text);
    const where = at ? ` at line ${at.line}, column ${at.column}` : '';
    throw new DatasetError(`Dataset ${file} is not valid JSON${where}: ${at?.reason ?? (err as Error).message}`, []);
  }
}

/**
 * Upserts a dataset by id in one transaction: all of it or nothing (CONTRACT 7). With `prune`,
 * whatever the file lacks is deleted too. A plain `key` is hashed here and never stored.
 */
export async function importDataset(db: Db, document: unknown, options: ImportOptions): Promise<ImportSummary> {
  const dataset = parseDataset(document);
  const timeIssues = checkTimestamps(dataset, options.nowMs);
  // References are checked inside the transaction, against what it will write over.
  return db.transaction(async (trx) => {
    const issues = [...timeIssues, ...(await checkReferences(trx, dataset, Boolean(options.prune)))];
    if (issues.length > 0) throw new DatasetError(`Invalid dataset: ${issues.length} problem(s)`, issues);
    const pruned = options.prune ? await pruneMissing(trx, dataset) : emptyCounts();
    await writeDataset(trx, dataset, options.nowMs);
    return { upserted: countsOf(dataset), pruned };
  });
}

/**
 * The schema validates relative timestamps against the epoch; one far in the future
 * (`now+90000d`) can still fall out of range at the real import time, and used to be written
 * as 1970. Checked here, before the transaction, so the error carries its path.
 */
function checkTimestamps(dataset: Dataset, nowMs: number): DatasetIssue[] {
  const issues: DatasetIssue[] = [];
  const fields = ['registered_at', 'published_at', 'last_heartbeat_at', 'updated_at', 'created_at'] as const;
  dataset.devices.forEach((device, i) => {
    for (const field of fields) {
      const value = device[field];
      if (value !== null && parseTimestamp(value, nowMs) === null) {
        issues.push({ path: `devices[${i}].${field}`, message: 'is out of the supported time range' });
      }
    }
  });
  return issues;
}

function emptyCounts(): EntityCounts {
  return { accounts: 0, users: 0, api_keys: 0, devices: 0, menus: 0 };
}

function countsOf(dataset: Dataset): EntityCounts {
  return {
    accounts: dataset.accounts.length,
    users: dataset.users.length,
    api_keys: dataset.api_keys.length,
    devices: dataset.devices.length,
    menus: dataset.menus.length,
  };
}

async function pruneMissing(trx: Kysely<Tables>, dataset: Dataset): Promise<EntityCounts> {
  const prune = async (table: 'api_keys' | 'devices' | 'menus' | 'users' | 'accounts', keep: string[]): Promise<number> => {
    const kept = new Set(keep);
    const missing = (await trx.selectFrom(table).select('id').execute()).map((r) => r.id).filter((id) => !kept.has(id));
    const deleted = await inChunks(missing, async (ids) => [Number((await trx.deleteFrom(table).where('id', 'in', ids).executeTakeFirst()).numDeletedRows)]);
    return deleted.reduce((a, b) => a + b, 0);
  };
  // Children first, so each count is what that table lost on its own account.
  const api_keys = await prune('api_keys', dataset.api_keys.map((k) => k.id));
  const devices = await prune('devices', dataset.devices.map((d) => d.id.toLowerCase()));
  const menus = await prune('menus', dataset.menus.map((m) => m.id));
  const users = await prune('users', dataset.users.map((u) => u.id));
  const accounts = await prune('accounts', dataset.accounts.map((a) => a.id));
  // Returned in the same key order as `upserted`, so the CLI prints both lines alike.
  return { accounts, users, api_keys, devices, menus };
}

/** Multi-row writes a slice at a time, within both engines' bound-parameter limits. */
async function inserts<T>(rows: T[], write: (part: T[]) => Promise<unknown>): Promise<void> {
  for (const part of chunks(rows)) await write(part);
}

async function writeDataset(trx: Kysely<Tables>, dataset: Dataset, nowMs: number): Promise<void> {
  const ts = (value: string): string => formatMicros(parseTimestamp(value, nowMs)!);
  const tsOrNull = (value: string | null): string | null => (value === null ? null : ts(value));
  await inserts(dataset.accounts, (part) =>
    trx.insertInto('accounts').values(part.map(({ id, name }) => ({ id, name })))
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ name: eb.ref('excluded.name') }))).execute(),
  );
  await inserts(dataset.users, (part) =>
    trx.insertInto('users').values(part.map(({ id, account_id, name }) => ({ id, account_id, name })))
      .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ account_id: eb.ref('excluded.account_id'), name: eb.ref('excluded.name') })))
      .execute(),
  );
  // Park the hashes of the keys this file rewrites first: checkReferences lets keys in the file
  // swap or hand over hashes, which the UNIQUE(key_sha256) constraint used to reject half-way.
  await inserts(dataset.api_keys, (part) =>
    trx.updateTable('api_keys').set({ key_sha256: sql`'moving:' || id` }).where('id', 'in', part.map((k) => k.id)).execute(),
  );
  await inserts(dataset.api_keys, (part) =>
    trx
      .insertInto('api_keys')
      .values(part.map((key) => ({
        id: key.id,
        user_id: key.user_id,
        name: key.name,
        key_sha256: key.key_sha256 ?? hashKey(key.key!),
        scopes: JSON.stringify([...new Set(key.scopes)]),
        created_at: formatMicros(nowMs * 1000),
      })))
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          user_id: eb.ref('excluded.user_id'),
          name: eb.ref('excluded.name'),
          key_sha256: eb.ref('excluded.key_sha256'),
          scopes: eb.ref('excluded.scopes'),
        })),
      )
      .execute(),
  );
  await writeDevices(trx, dataset.devices, ts, tsOrNull);
  await writeMenus(trx, dataset.menus);
}

const deviceColumns = [
  'name', 'timezone', 'screen_resolution', 'screen_orientation', 'registered_at', 'published_at', 'last_heartbeat_at',
  'offline_startup', 'offline_startup_delay_minutes', 'open_dev_tools', 'display_connected', 'connection_type', 'wifi_ssid',
  'wifi_signal_strength', 'updated_at', 'created_at',
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
  await inserts(rows, (part) => trx.deleteFrom('device_access').where('device_id', 'in', part.map((d) => d.id)).execute());
  const grants = devices.flatMap((device) => device.access.map((a) => ({ device_id: device.id.toLowerCase(), user_id: a.user_id, level: a.level })));
  await inserts(grants, (part) => trx.insertInto('device_access').values(part).execute());
}

/**
 * A menu keeps its place in the source order when it is updated; new menus go after the
 * existing ones, in file order. Every write gets a fresh random revision, so the parsed-tree
 * memo of the menu source never mistakes a re-created menu for the one it replaced.
 */
async function writeMenus(trx: Kysely<Tables>, menus: Dataset['menus']): Promise<void> {
  for (const menu of menus) {
    await trx
      .insertInto('menus')
      .values({
        id: menu.id,
        account_id: menu.account_id,
        position: sql<number>`(SELECT coalesce(max(position), -1) + 1 FROM menus)`,
        name: menu.name,
        description: menu.description,
        tags: JSON.stringify(menu.tags),
        groups_json: JSON.stringify(menu.groups.map(toGroup)),
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
  }
}

/** Input group → seed 2.2 shape with derived `metadata` totals, fields in the seed's order. */
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

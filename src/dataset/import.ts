import { randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import type { Db } from '../db/database.js';
import { hashKey } from '../auth/keys.js';
import { formatMicros, parseTimestamp } from '../time/timestamps.js';
import type { Group, Item } from '../sources/types.js';
import { datasetSchema, type Dataset, type GroupInput, type ItemInput } from './schema.js';
import { checkReferences } from './references.js';

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
    throw new DatasetError(`Dataset ${file} is not valid JSON: ${(err as Error).message}`, []);
  }
}

/**
 * Upserts a dataset by id in one transaction: all of it or nothing (CONTRACT 7). With `prune`,
 * whatever the file lacks is deleted too. A plain `key` is hashed here and never stored.
 */
export function importDataset(db: Db, document: unknown, options: ImportOptions): ImportSummary {
  const dataset = parseDataset(document);
  const issues = [...checkTimestamps(dataset, options.nowMs), ...checkReferences(db, dataset, Boolean(options.prune))];
  if (issues.length > 0) throw new DatasetError(`Invalid dataset: ${issues.length} problem(s)`, issues);
  return db.transaction(() => {
    const pruned = options.prune ? pruneMissing(db, dataset) : emptyCounts();
    writeDataset(db, dataset, options.nowMs);
    return { upserted: countsOf(dataset), pruned };
  }).immediate();
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

function pruneMissing(db: Db, dataset: Dataset): EntityCounts {
  const prune = (table: string, ids: string[]): number =>
    db.prepare(`DELETE FROM ${table} WHERE id NOT IN (SELECT value FROM json_each(?))`).run(JSON.stringify(ids)).changes;
  // Children first, so each count is what that table lost on its own account.
  const api_keys = prune('api_keys', dataset.api_keys.map((k) => k.id));
  const devices = prune('devices', dataset.devices.map((d) => d.id.toLowerCase()));
  const menus = prune('menus', dataset.menus.map((m) => m.id));
  const users = prune('users', dataset.users.map((u) => u.id));
  const accounts = prune('accounts', dataset.accounts.map((a) => a.id));
  // Returned in the same key order as `upserted`, so the CLI prints both lines alike.
  return { accounts, users, api_keys, devices, menus };
}

function writeDataset(db: Db, dataset: Dataset, nowMs: number): void {
  const ts = (value: string): string => formatMicros(parseTimestamp(value, nowMs)!);
  const tsOrNull = (value: string | null): string | null => (value === null ? null : ts(value));
  const upsertAccount = db.prepare(
    'INSERT INTO accounts (id, name) VALUES (@id, @name) ON CONFLICT(id) DO UPDATE SET name = excluded.name',
  );
  const upsertUser = db.prepare(`INSERT INTO users (id, account_id, name) VALUES (@id, @account_id, @name)
    ON CONFLICT(id) DO UPDATE SET account_id = excluded.account_id, name = excluded.name`);
  const upsertKey = db.prepare(`INSERT INTO api_keys (id, user_id, name, key_sha256, scopes, created_at)
    VALUES (@id, @user_id, @name, @key_sha256, @scopes, @created_at)
    ON CONFLICT(id) DO UPDATE SET user_id = excluded.user_id, name = excluded.name,
      key_sha256 = excluded.key_sha256, scopes = excluded.scopes`);
  for (const account of dataset.accounts) upsertAccount.run(account);
  for (const user of dataset.users) upsertUser.run(user);
  // Park the hashes of the keys this file rewrites first: checkReferences lets keys in the file
  // swap or hand over hashes, which the UNIQUE(key_sha256) constraint used to reject half-way.
  db.prepare(`UPDATE api_keys SET key_sha256 = 'moving:' || id WHERE id IN (SELECT value FROM json_each(?))`).run(
    JSON.stringify(dataset.api_keys.map((k) => k.id)),
  );
  for (const key of dataset.api_keys) {
    upsertKey.run({
      id: key.id,
      user_id: key.user_id,
      name: key.name,
      key_sha256: key.key_sha256 ?? hashKey(key.key!),
      scopes: JSON.stringify([...new Set(key.scopes)]),
      created_at: formatMicros(nowMs * 1000),
    });
  }
  writeDevices(db, dataset.devices, ts, tsOrNull);
  writeMenus(db, dataset.menus);
}

function writeDevices(
  db: Db,
  devices: Dataset['devices'],
  ts: (value: string) => string,
  tsOrNull: (value: string | null) => string | null,
): void {
  const upsert = db.prepare(`INSERT INTO devices (id, name, timezone, screen_resolution, screen_orientation,
      registered_at, published_at, last_heartbeat_at, offline_startup, offline_startup_delay_minutes, open_dev_tools,
      display_connected, connection_type, wifi_ssid, wifi_signal_strength, updated_at, created_at)
    VALUES (@id, @name, @timezone, @screen_resolution, @screen_orientation, @registered_at, @published_at,
      @last_heartbeat_at, @offline_startup, @offline_startup_delay_minutes, @open_dev_tools, @display_connected,
      @connection_type, @wifi_ssid, @wifi_signal_strength, @updated_at, @created_at)
    ON CONFLICT(id) DO UPDATE SET name = excluded.name, timezone = excluded.timezone,
      screen_resolution = excluded.screen_resolution, screen_orientation = excluded.screen_orientation,
      registered_at = excluded.registered_at, published_at = excluded.published_at,
      last_heartbeat_at = excluded.last_heartbeat_at, offline_startup = excluded.offline_startup,
      offline_startup_delay_minutes = excluded.offline_startup_delay_minutes, open_dev_tools = excluded.open_dev_tools,
      display_connected = excluded.display_connected, connection_type = excluded.connection_type,
      wifi_ssid = excluded.wifi_ssid, wifi_signal_strength = excluded.wifi_signal_strength,
      updated_at = excluded.updated_at, created_at = excluded.created_at`);
  const clearAccess = db.prepare('DELETE FROM device_access WHERE device_id = ?');
  const grant = db.prepare('INSERT INTO device_access (device_id, user_id, level) VALUES (?, ?, ?)');
  for (const device of devices) {
    const id = device.id.toLowerCase();
    upsert.run({
      id,
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
    });
    clearAccess.run(id);
    for (const access of device.access) grant.run(id, access.user_id, access.level);
  }
}

/**
 * A menu keeps its place in the source order when it is updated; new menus go after the
 * existing ones, in file order. Every write gets a fresh random revision, so the parsed-tree
 * memo of the menu source never mistakes a re-created menu for the one it replaced.
 */
function writeMenus(db: Db, menus: Dataset['menus']): void {
  const upsert = db.prepare(`INSERT INTO menus (id, account_id, position, name, description, tags, groups_json, revision)
    VALUES (@id, @account_id, (SELECT coalesce(max(position), -1) + 1 FROM menus), @name, @description, @tags,
      @groups_json, @revision)
    ON CONFLICT(id) DO UPDATE SET account_id = excluded.account_id,
      name = excluded.name, description = excluded.description, tags = excluded.tags,
      groups_json = excluded.groups_json, revision = excluded.revision`);
  for (const menu of menus) {
    upsert.run({
      id: menu.id,
      account_id: menu.account_id,
      name: menu.name,
      description: menu.description,
      tags: JSON.stringify(menu.tags),
      groups_json: JSON.stringify(menu.groups.map(toGroup)),
      revision: randomInt(1, 2 ** 47),
    });
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

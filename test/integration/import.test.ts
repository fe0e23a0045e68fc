import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import { verifiedKeyTtlMs } from '../../src/auth/embedded-keys.js';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Db } from '../../src/db/database.js';
import { DatasetError, importDataset, parseDataset, type DatasetIssue } from '../../src/dataset/import.js';
import { describeDatasetError } from '../../src/dataset/report.js';
import { demoDatasetPath, projectRoot } from '../../src/paths.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { buildTestApp, ManualClock, sqlHelpers, type TestApp } from '../helpers/app.js';
import { openTestDatabase, rawQuery, testEngine } from '../helpers/engine.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = any;

const examplePath = join(projectRoot, 'test', 'fixtures', 'dataset.example.json');
const exampleKey = 'sk_test_harbor_ana_0123456789abcdef';
const demoKey = 'sk_demo_harbor_ana_all_0123456789';
const nowMs = Date.parse('2026-06-01T12:00:00.250Z');

/** A fresh, mutable copy of the example dataset (docs/datasets.md). */
const example = (): Doc => JSON.parse(readFileSync(examplePath, 'utf8'));
const demo = (): Doc => JSON.parse(readFileSync(demoDatasetPath, 'utf8'));
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const iso = (ms: number) => formatMicros(ms * 1000);

/** Raw SQL with `?` placeholders, on either engine. */
const sqlAll = <T = Record<string, unknown>>(db: Db, text: string, ...params: unknown[]) => rawQuery<T>(db, text, ...params);
const sqlOne = <T = Record<string, unknown>>(db: Db, text: string, ...params: unknown[]) => sqlHelpers(db).one<T>(text, ...params);
const sqlValue = <T = unknown>(db: Db, text: string, ...params: unknown[]) => sqlHelpers(db).value<T>(text, ...params);

/**
 * SQLite databases live in files here, so a second (read-only) connection can take the byte
 * image of the database (`serialize()`, every page, free ones included) that the tests compare.
 * PostgreSQL's storage belongs to its server: there, the logical dump is the check.
 */
let tmp: string;
let files = 0;
const sqliteFiles = new WeakMap<Db, string>();
const nextFile = () => join(tmp, `import-${(files += 1)}.db`);

const dbs: Array<{ db: Db; drop(): Promise<void> }> = [];
const apps: TestApp[] = [];
const cleanups: Array<() => Promise<void>> = [];
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-import-test-'));
});
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});
async function freshDb(): Promise<Db> {
  const file = testEngine === 'sqlite' ? nextFile() : undefined;
  const opened = await openTestDatabase(file);
  dbs.push(opened);
  if (file) sqliteFiles.set(opened.db, file);
  return opened.db;
}
async function app(dataset: Doc, clock = new ManualClock(nowMs)): Promise<TestApp> {
  const file = testEngine === 'sqlite' ? nextFile() : undefined;
  const t = await buildTestApp({ dataset, clock, databasePath: file });
  apps.push(t);
  if (file) sqliteFiles.set(t.db, file);
  return t;
}
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  for (const t of apps.splice(0)) await t.close();
  for (const { db, drop } of dbs.splice(0)) {
    await db.close();
    await drop();
  }
});

/**
 * The database's own tables with their columns, in table order. SQLite: Kysely's introspection.
 * PostgreSQL: the catalog of the connection's schema only — Kysely's introspector reads every
 * schema of the database and resolves each by name (pg_get_serial_sequence), which fails when
 * another test run drops its schema meanwhile.
 */
async function catalogTables(db: Db): Promise<Array<{ name: string; columns: string[] }>> {
  if (db.engine === 'sqlite') {
    return (await db.kysely.introspection.getTables())
      .filter((table) => !table.isView)
      .map((table) => ({ name: table.name, columns: table.columns.map((column) => column.name) }))
      .sort((x, y) => (x.name < y.name ? -1 : 1));
  }
  const rows = await sqlAll<{ tbl: string; col: string }>(
    db,
    `SELECT c.relname AS tbl, a.attname AS col FROM pg_class c
     JOIN pg_namespace n ON n.oid = c.relnamespace
     JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
     WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
     ORDER BY c.relname, a.attnum`,
  );
  const byName = new Map<string, string[]>();
  for (const { tbl, col } of rows) byName.set(tbl, [...(byName.get(tbl) ?? []), col]);
  return [...byName].map(([name, columns]) => ({ name, columns }));
}

/** The database's own tables, sorted. */
async function tables(db: Db): Promise<string[]> {
  return (await catalogTables(db)).map((table) => table.name);
}

/** Every column of every table (both engines). */
async function columns(db: Db): Promise<Array<{ table: string; column: string }>> {
  return (await catalogTables(db)).flatMap((table) => table.columns.map((column) => ({ table: table.name, column })));
}

/** The schema as the engine records it, with the schema version. */
async function schemaImage(db: Db): Promise<unknown> {
  if (db.engine === 'sqlite') {
    return {
      user_version: await sqlValue(db, 'PRAGMA user_version'),
      schema: await sqlAll(db, 'SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name'),
    };
  }
  return {
    schema_version: await sqlAll(db, 'SELECT version FROM schema_version'),
    columns: await sqlAll(
      db,
      `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
       WHERE table_schema = current_schema() ORDER BY table_name, column_name`,
    ),
    indexes: await sqlAll(db, 'SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema() ORDER BY tablename, indexname'),
    constraints: await sqlAll(
      db,
      `SELECT c.conrelid::regclass::text AS tbl, c.conname, pg_get_constraintdef(c.oid) AS def FROM pg_constraint c
       WHERE c.connamespace = current_schema()::regnamespace ORDER BY 1, 2`,
    ),
  };
}

/** Every row of every table (sorted), the schema and the schema version: a full logical dump. */
async function dump(db: Db): Promise<string> {
  const out: Record<string, unknown> = { schema: await schemaImage(db) };
  for (const table of await tables(db)) {
    out[table] = (await sqlAll(db, `SELECT * FROM "${table}"`)).map((row) => JSON.stringify(row)).sort();
  }
  return JSON.stringify(out, null, 1);
}

async function counts(db: Db): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of await tables(db)) out[table] = (await sqlValue<number>(db, `SELECT count(*) FROM "${table}"`))!;
  return out;
}

/** SQLite only: the byte image of the database file (every page, free ones included). */
function image(db: Db): Buffer {
  const file = sqliteFiles.get(db);
  if (!file) throw new Error('no SQLite file for this database');
  const reader = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    return reader.serialize();
  } finally {
    reader.close();
  }
}

/** SQLite only: whether `needle` is in the byte image or in any of the database's files (WAL too). */
function bytesContain(db: Db, needle: string): boolean {
  const file = sqliteFiles.get(db)!;
  if (image(db).includes(Buffer.from(needle))) return true;
  return [file, `${file}-wal`, `${file}-shm`].some((f) => existsSync(f) && readFileSync(f).includes(Buffer.from(needle)));
}

/** `table.column` of every stored value (any table, any row) that contains one of the needles. */
async function storedIn(db: Db, needles: string[]): Promise<string[]> {
  const hits: string[] = [];
  for (const table of await tables(db)) {
    for (const row of await sqlAll(db, `SELECT * FROM "${table}"`)) {
      for (const [column, cell] of Object.entries(row)) {
        const text = Buffer.isBuffer(cell) ? cell.toString('latin1') : String(cell);
        for (const needle of needles) if (text.includes(needle)) hits.push(`${table}.${column}`);
      }
    }
  }
  return hits;
}

/** Rows whose reference points nowhere; on SQLite `PRAGMA foreign_key_check` as well. */
async function danglingReferences(db: Db): Promise<unknown[]> {
  const found: unknown[] = db.engine === 'sqlite' ? await sqlAll(db, 'PRAGMA foreign_key_check') : [];
  const references: Array<[string, string, string]> = [
    ['users', 'account_id', 'accounts'],
    ['api_keys', 'user_id', 'users'],
    ['device_access', 'device_id', 'devices'],
    ['device_access', 'user_id', 'users'],
    ['menus', 'account_id', 'accounts'],
  ];
  for (const [child, column, parent] of references) {
    const rows = await sqlAll(db, `SELECT c."${column}" AS ref FROM "${child}" c WHERE NOT EXISTS (SELECT 1 FROM "${parent}" p WHERE p.id = c."${column}")`);
    found.push(...rows.map((row) => ({ table: child, column, ...row })));
  }
  return found;
}

/** Runs an import that must fail; returns its DatasetError. */
async function importError(db: Db, doc: Doc, prune = false): Promise<DatasetError> {
  let failure: unknown;
  try {
    await await importDataset(db, doc, { nowMs, prune });
  } catch (err) {
    failure = err ?? new Error('rejected without a reason');
  }
  if (failure === undefined) throw new Error('import did not fail');
  expect(failure).toBeInstanceOf(DatasetError);
  return failure as DatasetError;
}

/** Asserts a failed import names `path` and left the database exactly as it was. */
async function expectRejected(db: Db, doc: Doc, path: string, message?: RegExp, prune = false): Promise<DatasetIssue[]> {
  const before = await await dump(db);
  const bytesBefore = db.engine === 'sqlite' ? image(db) : undefined;
  const err = await importError(db, doc, prune);
  expect(err.issues.map((i) => i.path)).toContain(path);
  if (message) expect(err.issues.find((i) => i.path === path)!.message).toMatch(message);
  expect(await await dump(db)).toBe(before);
  if (bytesBefore) expect(image(db).equals(bytesBefore)).toBe(true);
  return err.issues;
}

/** Makes every UPDATE of a menu fail with "injected failure"; returns how to take it away again. */
async function refuseMenuUpdates(db: Db): Promise<() => Promise<void>> {
  if (db.engine === 'sqlite') {
    // A TEMP trigger lives outside the main schema the dump compares (and the file's pages).
    await sqlAll(db, `CREATE TEMP TRIGGER refuse_menus BEFORE UPDATE ON main.menus BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
    return async () => {
      await sqlAll(db, 'DROP TRIGGER IF EXISTS temp.refuse_menus');
    };
  }
  await sqlAll(db, `CREATE FUNCTION refuse_menus() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$`);
  await sqlAll(db, 'CREATE TRIGGER refuse_menus BEFORE UPDATE ON menus FOR EACH ROW EXECUTE FUNCTION refuse_menus()');
  return async () => {
    await sqlAll(db, 'DROP TRIGGER IF EXISTS refuse_menus ON menus');
    await sqlAll(db, 'DROP FUNCTION IF EXISTS refuse_menus()');
  };
}

describe('the example dataset (docs/datasets.md)', () => {
  test('imports, and reports what it upserted', async () => {
    const db = await freshDb();
    const summary = await importDataset(db, example(), { nowMs });
    expect(summary).toEqual({
      upserted: { accounts: 1, users: 2, api_keys: 2, devices: 2, menus: 1 },
      pruned: { accounts: 0, users: 0, api_keys: 0, devices: 0, menus: 0 },
    });
    expect(await counts(db)).toMatchObject({ accounts: 1, users: 2, api_keys: 2, devices: 2, device_access: 3, menus: 1 });
    // Device ids are stored lower case, whatever case the file used.
    expect((await sqlAll<{ id: string }>(db, 'SELECT id FROM devices ORDER BY id')).map((r) => r.id)).toEqual(['a4:83:e7:1f:2b:01', 'a4:83:e7:1f:2b:02']);
    expect(await danglingReferences(db)).toEqual([]);
  });

  test('parseDataset accepts it and fills defaults', () => {
    const parsed = parseDataset({ accounts: [{ id: 'acc', name: 'A' }] });
    expect(parsed).toMatchObject({ accounts: [{ id: 'acc', name: 'A' }], users: [], api_keys: [], devices: [], menus: [] });
    expect(parseDataset(example()).devices[1]!.published_at).toBeNull();
  });

  test('relative timestamps resolve against nowMs', async () => {
    const db = await freshDb();
    await importDataset(db, example(), { nowMs });
    const row = async (id: string) => (await sqlOne(db, 'SELECT * FROM devices WHERE id = ?', id))!;
    expect(await row('a4:83:e7:1f:2b:01')).toMatchObject({
      published_at: iso(nowMs - 2 * 3600_000),
      last_heartbeat_at: iso(nowMs - 30_000),
      updated_at: iso(nowMs - 3600_000),
    });
    expect((await row('a4:83:e7:1f:2b:01')).last_heartbeat_at).toBe('2026-06-01T11:59:30.250000Z');
    expect(await row('a4:83:e7:1f:2b:02')).toMatchObject({
      published_at: null,
      last_heartbeat_at: '2026-05-29T12:00:00.250000Z',
      updated_at: '2026-05-29T12:00:00.250000Z',
    });
    // Another import time moves them.
    await importDataset(db, example(), { nowMs: nowMs + 60_000 });
    expect((await row('a4:83:e7:1f:2b:01')).last_heartbeat_at).toBe('2026-06-01T12:00:30.250000Z');
  });

  test('microseconds are kept, in the database and over HTTP; offsets are normalised', async () => {
    const doc = example();
    doc.devices[1].created_at = '2025-02-01T16:30:00.000001+02:00';
    const db = await freshDb();
    await importDataset(db, doc, { nowMs });
    const row = await sqlOne(db, "SELECT registered_at, created_at FROM devices WHERE id = 'a4:83:e7:1f:2b:01'");
    expect(row).toEqual({ registered_at: '2025-01-10T09:00:00.123456Z', created_at: '2025-01-10T09:00:00.123456Z' });
    expect(await sqlOne(db, "SELECT registered_at, created_at FROM devices WHERE id = 'a4:83:e7:1f:2b:02'")).toEqual({
      registered_at: '2025-02-01T14:30:00.000001Z',
      created_at: '2025-02-01T14:30:00.000001Z',
    });

    const t = await app(doc);
    const one = await request(t.app).get('/devices/A4:83:E7:1F:2B:01').set('Authorization', `Bearer ${exampleKey}`).expect(200);
    expect(one.body).toMatchObject({
      id: 'a4:83:e7:1f:2b:01',
      registered_at: '2025-01-10T09:00:00.123456Z',
      last_heartbeat_at: '2026-06-01T11:59:30.250000Z',
      is_online: true,
    });
    const list = await request(t.app).get('/devices').set('Authorization', `Bearer ${exampleKey}`).expect(200);
    expect(list.body.total).toBe(2);
    expect(list.body.data.map((d: Doc) => [d.id, d.registered_at, d.created_at, d.is_online])).toEqual([
      ['A4:83:E7:1F:2B:01', '2025-01-10T09:00:00.123456Z', '2025-01-10T09:00:00.123456Z', true],
      ['A4:83:E7:1F:2B:02', '2025-02-01T14:30:00.000001Z', '2025-02-01T14:30:00.000001Z', false],
    ]);
  });
});

describe('api keys', () => {
  test('a plain key is stored only as its SHA-256: it appears in no column of any table', async () => {
    const db = await freshDb();
    await importDataset(db, example(), { nowMs });
    expect(await sqlValue(db, "SELECT key_sha256 FROM api_keys WHERE id = 'key_ana_all'")).toBe(sha256(exampleKey));
    let columnsScanned = 0;
    // instr (SQLite) and strpos (PostgreSQL): the 1-based position of a substring, 0 when absent.
    const position = db.engine === 'sqlite' ? 'instr' : 'strpos';
    for (const { table, column: name } of await columns(db)) {
      columnsScanned += 1;
      const hits = await sqlValue(db, `SELECT count(*) FROM "${table}" WHERE ${position}(CAST("${name}" AS TEXT), ?) > 0`, exampleKey);
      expect({ table, column: name, hits }).toEqual({ table, column: name, hits: 0 });
    }
    expect(columnsScanned).toBeGreaterThan(30);
    expect(await storedIn(db, [exampleKey])).toEqual([]);
    // Not even in a free page of the database image (SQLite: the file and its WAL).
    if (db.engine === 'sqlite') expect(bytesContain(db, exampleKey)).toBe(false);
  });

  test('the imported plain key then authenticates over HTTP, in both areas', async () => {
    const t = await app(example());
    const me = await request(t.app).get('/v1/me').set('X-API-Key', exampleKey).expect(200);
    expect(me.body).toEqual({
      key: { id: 'key_ana_all', name: 'Automation (all scopes)', scopes: ['device:read', 'menu:read', 'hooks:write'] },
      account: { id: 'acc_harbor', name: 'Harbor Street Diner' },
    });
    await request(t.app).get('/v1/me').set('Authorization', `Bearer ${exampleKey}`).expect(200);
    const devices = await request(t.app).get('/devices').set('Authorization', `Bearer ${exampleKey}`).expect(200);
    expect(devices.body.total).toBe(2);
    await request(t.app).get('/v1/me').set('X-API-Key', `${exampleKey}x`).expect(401, { message: 'Invalid API key' });
  });

  test('key_sha256 is accepted (any case) and the matching key authenticates', async () => {
    const secretKey = 'sk_hashed_elsewhere_0123456789abc';
    const doc = example();
    doc.api_keys[1].key_sha256 = sha256(secretKey).toUpperCase();
    doc.api_keys[1].scopes = ['menu:read'];
    const t = await app(doc);
    expect(await t.value("SELECT key_sha256 FROM api_keys WHERE id = 'key_ben_menu'")).toBe(sha256(secretKey));
    const me = await request(t.app).get('/v1/me').set('X-API-Key', secretKey).expect(200);
    expect(me.body.key).toEqual({ id: 'key_ben_menu', name: 'Menu board only', scopes: ['menu:read'] });
    // menu:read only: the device area refuses it.
    await request(t.app)
      .get('/devices')
      .set('Authorization', `Bearer ${secretKey}`)
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
  });

  test('duplicate scopes are stored once', async () => {
    const doc = example();
    doc.api_keys[0].scopes = ['menu:read', 'menu:read', 'device:read'];
    const db = await freshDb();
    await importDataset(db, doc, { nowMs });
    expect(JSON.parse((await sqlValue(db, "SELECT scopes FROM api_keys WHERE id = 'key_ana_all'")) as string)).toEqual(['menu:read', 'device:read']);
  });

  test('two keys in the file may swap their keys on re-import', async () => {
    const keyA = 'sk_swap_test_key_a_000000000000';
    const keyB = 'sk_swap_test_key_b_000000000000';
    const doc = example();
    doc.api_keys[1] = { id: 'key_ben_menu', user_id: 'usr_ben', name: 'Ben', key: keyB, scopes: ['menu:read'] };
    doc.api_keys[0].key = keyA;
    const t = await app(doc);
    doc.api_keys[0].key = keyB;
    doc.api_keys[1].key = keyA;
    await importDataset(t.db, doc, { nowMs });
    expect((await request(t.app).get('/v1/me').set('X-API-Key', keyA).expect(200)).body.key.id).toBe('key_ben_menu');
    expect((await request(t.app).get('/v1/me').set('X-API-Key', keyB).expect(200)).body.key.id).toBe('key_ana_all');
  });

  test('a key may move from one record to a new one in the same file', async () => {
    const doc = example();
    const t = await app(doc);
    const moved = { ...doc.api_keys[0], id: 'key_ana_new', name: 'Moved' };
    doc.api_keys[0] = { ...doc.api_keys[0], key: 'sk_replacement_key_for_old_record_1' };
    doc.api_keys.unshift(moved);
    await importDataset(t.db, doc, { nowMs });
    expect((await request(t.app).get('/v1/me').set('X-API-Key', exampleKey).expect(200)).body.key.id).toBe('key_ana_new');
    expect(await t.value("SELECT count(*) FROM api_keys WHERE key_sha256 LIKE 'moving:%'")).toBe(0);
  });
});

describe('upsert by id', () => {
  test('importing the same file twice changes no counts and no data (menu revision aside)', async () => {
    const db = await freshDb();
    await importDataset(db, example(), { nowMs });
    const strip = (text: string) => text.replace(/\\"revision\\":\d+/g, '');
    const before = await dump(db);
    const countsBefore = await counts(db);
    await importDataset(db, example(), { nowMs });
    expect(await counts(db)).toEqual(countsBefore);
    expect(strip(await dump(db))).toBe(strip(before));
  });

  test('a changed name updates the record in place', async () => {
    const doc = example();
    const t = await app(doc);
    doc.accounts[0].name = 'Harbor Street Diner & Bar';
    doc.users[0].name = 'Ana O.';
    doc.api_keys[0].name = 'Renamed key';
    doc.devices[0].name = 'Front counter (left)';
    doc.menus[0].name = 'All day long';
    const before = await counts(t.db);
    await importDataset(t.db, doc, { nowMs });
    expect(await counts(t.db)).toEqual(before);
    expect(await t.value("SELECT name FROM users WHERE id = 'usr_ana'")).toBe('Ana O.');
    const me = await request(t.app).get('/v1/me').set('X-API-Key', exampleKey).expect(200);
    expect(me.body).toMatchObject({ key: { name: 'Renamed key' }, account: { name: 'Harbor Street Diner & Bar' } });
    const device = await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${exampleKey}`).expect(200);
    expect(device.body.name).toBe('Front counter (left)');
    const menus = await request(t.app).get('/v1/menus').set('X-API-Key', exampleKey).expect(200);
    expect(menus.body.menus.map((m: Doc) => m.name)).toEqual(['All day long']);
  });

  test('a device id in another case updates the same device', async () => {
    const doc = example();
    const db = await freshDb();
    await importDataset(db, doc, { nowMs });
    doc.devices[0].id = doc.devices[0].id.toLowerCase();
    doc.devices[0].name = 'Lower-case id';
    await importDataset(db, doc, { nowMs });
    expect(await sqlValue(db, 'SELECT count(*) FROM devices')).toBe(2);
    expect(await sqlValue(db, "SELECT name FROM devices WHERE id = 'a4:83:e7:1f:2b:01'")).toBe('Lower-case id');
  });

  test('a file with only some records leaves the others alone (no prune)', async () => {
    const db = await freshDb();
    await importDataset(db, example(), { nowMs });
    const before = await counts(db);
    await importDataset(db, { accounts: [{ id: 'acc_new', name: 'New' }] }, { nowMs });
    expect(await counts(db)).toEqual({ ...before, accounts: 2 });
    // A new file may refer to records that already exist in the database.
    await importDataset(db, { users: [{ id: 'usr_cy', account_id: 'acc_harbor', name: 'Cy' }] }, { nowMs });
    expect(await sqlValue(db, "SELECT account_id FROM users WHERE id = 'usr_cy'")).toBe('acc_harbor');
  });
});

describe('invalid datasets: the path is named and nothing is written', () => {
  /** Each case runs against a database that already holds the example. */
  async function populated(): Promise<Db> {
    const db = await freshDb();
    await importDataset(db, example(), { nowMs });
    return db;
  }

  test.each<[string, (doc: Doc) => void, string, RegExp]>([
    ['an impossible date', (d) => (d.devices[1].registered_at = '2025-02-30T09:00:00Z'), 'devices[1].registered_at', /ISO 8601/],
    ['a timestamp without zone', (d) => (d.devices[0].updated_at = '2025-01-10T09:00:00'), 'devices[0].updated_at', /with a zone/],
    ['a garbage relative time', (d) => (d.devices[0].last_heartbeat_at = 'now-5w'), 'devices[0].last_heartbeat_at', /now-90s/],
    ['an out-of-range relative time', (d) => (d.devices[1].published_at = 'now+999999999d'), 'devices[1].published_at', /ISO 8601|range/],
    ['an unknown user in access', (d) => (d.devices[0].access[0].user_id = 'usr_nobody'), 'devices[0].access[0].user_id', /unknown user "usr_nobody"/],
    ['a user listed twice in access', (d) => d.devices[1].access.push({ user_id: 'usr_ana', level: 'update' }), 'devices[1].access[1].user_id', /twice/],
    ['an access level that does not exist', (d) => (d.devices[1].access[0].level = 'admin'), 'devices[1].access[0].level', /read|update/],
    ['a duplicate user id', (d) => (d.users[1].id = 'usr_ana'), 'users[1].id', /duplicate id "usr_ana" \(also users\[0\]\)/],
    ['a duplicate device id in another case', (d) => (d.devices[1].id = 'a4:83:e7:1f:2b:01'), 'devices[1].id', /duplicate/],
    ['a duplicate account id', (d) => d.accounts.push({ id: 'acc_harbor', name: 'Again' }), 'accounts[1].id', /duplicate/],
    ['an unknown account of a user', (d) => (d.users[0].account_id = 'acc_nowhere'), 'users[0].account_id', /unknown account/],
    ['an unknown user of a key', (d) => (d.api_keys[1].user_id = 'usr_nobody'), 'api_keys[1].user_id', /unknown user/],
    ['an unknown account of a menu', (d) => (d.menus[0].account_id = 'acc_nowhere'), 'menus[0].account_id', /unknown account/],
    ['an unknown field on an item', (d) => (d.menus[0].groups[0].items[0].in_stock = true), 'menus[0].groups[0].items[0].in_stock', /unknown field "in_stock"/],
    ['an unknown field on a device', (d) => (d.devices[1].colour = 'red'), 'devices[1].colour', /unknown field/],
    ['an unknown top-level field', (d) => (d.widgets = []), 'widgets', /unknown field/],
    [
      'a missing item field deep in the tree',
      (d) => delete d.menus[0].groups[0].groups[0].items[0].items[1].inStock,
      'menus[0].groups[0].groups[0].items[0].items[1].inStock',
      /boolean/,
    ],
    [
      'a duplicate group id across the tree',
      (d) => (d.menus[0].groups[1].id = d.menus[0].groups[0].groups[0].id),
      'menus[0].groups[1].id',
      /duplicate group id/,
    ],
    ['a wrong type', (d) => (d.devices[0].offline_startup_delay_minutes = '5'), 'devices[0].offline_startup_delay_minutes', /number/],
    ['an empty name', (d) => (d.accounts[0].name = ''), 'accounts[0].name', /non-empty/],
    ['a bad screen resolution', (d) => (d.devices[0].screen_resolution = 'full hd'), 'devices[0].screen_resolution', /<width>x<height>/],
    ['an unknown scope', (d) => (d.api_keys[0].scopes = ['device:write']), 'api_keys[0].scopes[0]', /device:read/],
    ['a key that is too short', (d) => (d.api_keys[0].key = 'short'), 'api_keys[0].key', /16-256/],
    ['a key with a space', (d) => (d.api_keys[0].key = 'sk test with spaces 0123456789'), 'api_keys[0].key', /16-256/],
    ['a malformed key_sha256', (d) => (d.api_keys[1].key_sha256 = 'abc'), 'api_keys[1].key_sha256', /64 hex/],
    ['both key and key_sha256', (d) => (d.api_keys[0].key_sha256 = sha256('x')), 'api_keys[0]', /exactly one/],
    ['neither key nor key_sha256', (d) => delete d.api_keys[0].key, 'api_keys[0]', /exactly one/],
    [
      'two keys with the same key',
      (d) => (d.api_keys[1] = { ...d.api_keys[1], key_sha256: sha256(exampleKey) }),
      'api_keys[1].key_sha256',
      /same key as api key "key_ana_all"/,
    ],
    ['a non-array section', (d) => (d.devices = {}), 'devices', /array/],
  ])('%s', async (_why, mutate, path, message) => {
    const db = await populated();
    const doc = example();
    mutate(doc);
    await expectRejected(db, doc, path, message);
  });

  test.each([null, [], 'dataset', 42])('a document that is not an object (%j)', async (doc) => {
    const db = await populated();
    await expectRejected(db, doc, '$');
  });

  test('every problem is reported, not only the first, and the valid records are not written either', async () => {
    const db = await freshDb();
    const doc = example();
    doc.devices[1].registered_at = '2025-02-30T09:00:00Z';
    doc.devices[0].access[0].user_id = 'usr_nobody';
    doc.users.push({ id: 'usr_ana', account_id: 'acc_harbor', name: 'Dup' });
    // Schema problems stop before the reference checks run.
    let issues = await expectRejected(db, doc, 'devices[1].registered_at');
    expect(issues).toHaveLength(1);
    doc.devices[1].registered_at = '2025-02-01T14:30:00Z';
    issues = await expectRejected(db, doc, 'devices[0].access[0].user_id');
    expect(issues.map((i) => i.path).sort()).toEqual(['devices[0].access[0].user_id', 'users[2].id']);
    expect(await counts(db)).toMatchObject({ accounts: 0, users: 0, api_keys: 0, devices: 0, menus: 0 });
  });

  test('a key already held by another record in the database is refused, without echoing it', async () => {
    const db = await populated();
    const doc = { api_keys: [{ id: 'key_thief', user_id: 'usr_ben', name: 'Copy', key: exampleKey, scopes: [] }] };
    const issues = await expectRejected(db, doc, 'api_keys[0].key', /same key as existing api key "key_ana_all"/);
    expect(JSON.stringify(issues)).not.toContain(exampleKey);
  });

  test('with --prune, references must resolve inside the file', async () => {
    const db = await populated();
    // Fine without prune: usr_ben exists in the database...
    const doc = example();
    doc.users = doc.users.filter((u: Doc) => u.id !== 'usr_ben');
    await importDataset(db, doc, { nowMs });
    // ...but prune would delete usr_ben, so the references to it are errors.
    const issues = await expectRejected(db, doc, 'devices[0].access[1].user_id', /unknown user "usr_ben"/, true);
    expect(issues.map((i) => i.path)).toContain('api_keys[1].user_id');
  });

  test('a failure inside the write transaction rolls everything back, with and without prune', async () => {
    const db = await populated();
    await importDataset(db, { accounts: [{ id: 'acc_extra', name: 'Extra' }] }, { nowMs });
    // The file is valid; the database refuses the last write (menus come after accounts, users,
    // keys and devices): a trigger (SQLite: TEMP, outside the main schema the dump compares).
    const removeTrigger = await refuseMenuUpdates(db);
    cleanups.push(removeTrigger);
    const doc = example();
    doc.accounts[0].name = 'Changed';
    doc.devices[0].name = 'Changed';
    doc.devices[0].access = [{ user_id: 'usr_ben', level: 'read' }];
    doc.api_keys[0].key = 'sk_a_brand_new_key_0123456789';
    doc.menus[0].name = 'Changed';
    for (const prune of [false, true]) {
      const before = await dump(db);
      const bytes = db.engine === 'sqlite' ? image(db) : undefined;
      // Matched by message: better-sqlite3's native addon is loaded once per jest worker, so on
      // SQLite the error may come from another test file's realm (`toThrow` needs an Error of this one).
      await expect(importDataset(db, doc, { nowMs, prune })).rejects.toMatchObject({ message: expect.stringContaining('injected failure') });
      expect(await dump(db)).toBe(before);
      if (bytes) expect(image(db).equals(bytes)).toBe(true);
    }
    expect(await sqlValue(db, "SELECT name FROM accounts WHERE id = 'acc_extra'")).toBe('Extra');
    expect(await sqlValue(db, "SELECT key_sha256 FROM api_keys WHERE id = 'key_ana_all'")).toBe(sha256(exampleKey));
    // Once the obstacle is gone the same file imports.
    await removeTrigger();
    await importDataset(db, doc, { nowMs, prune: true });
    expect(await sqlValue(db, "SELECT count(*) FROM accounts WHERE id = 'acc_extra'")).toBe(0);
  });
});

describe('describeDatasetError', () => {
  test('the message, then one indented `path: problem` line per issue', () => {
    const err = new DatasetError('Invalid dataset: 2 problem(s)', [
      { path: 'devices[1].registered_at', message: 'must be an ISO 8601 timestamp' },
      { path: 'users[1].id', message: 'duplicate id "usr_ana" (also users[0])' },
    ]);
    expect(describeDatasetError(err)).toBe(
      'Invalid dataset: 2 problem(s)\n' +
        '  devices[1].registered_at: must be an ISO 8601 timestamp\n' +
        '  users[1].id: duplicate id "usr_ana" (also users[0])',
    );
  });

  test('a long list is cut after `max` issues with a count of the rest', () => {
    const issues = Array.from({ length: 25 }, (_, i) => ({ path: `devices[${i}].name`, message: 'bad' }));
    const lines = describeDatasetError(new DatasetError('Invalid dataset: 25 problem(s)', issues)).split('\n');
    expect(lines).toHaveLength(1 + 20 + 1);
    expect(lines[20]).toBe('  devices[19].name: bad');
    expect(lines[21]).toBe('  … and 5 more');
    expect(describeDatasetError(new DatasetError('x', issues), 3).split('\n')).toEqual([
      'x',
      '  devices[0].name: bad',
      '  devices[1].name: bad',
      '  devices[2].name: bad',
      '  … and 22 more',
    ]);
  });

  test('a real import error renders with its paths', async () => {
    const doc = example();
    doc.devices[1].registered_at = 'yesterday';
    const text = describeDatasetError(await importError(await freshDb(), doc));
    expect(text).toMatch(/^Invalid dataset: 1 problem\(s\)\n {2}devices\[1\]\.registered_at: must be an ISO 8601/);
  });
});

describe('--prune', () => {
  /** The example plus a second account with everything hanging off it. */
  function withOther(): Doc {
    const doc = example();
    doc.accounts.push({ id: 'acc_other', name: 'Other' });
    doc.users.push({ id: 'usr_zoe', account_id: 'acc_other', name: 'Zoe' });
    doc.api_keys.push({ id: 'key_zoe', user_id: 'usr_zoe', name: 'Zoe', key: 'sk_test_zoe_other_account_00000', scopes: ['device:read'] });
    const device = { ...doc.devices[0], id: 'B0:00:00:00:00:01', name: 'Other lobby', access: [{ user_id: 'usr_zoe', level: 'update' }] };
    doc.devices.push(device);
    doc.devices[0].access.push({ user_id: 'usr_zoe', level: 'read' });
    doc.menus.push({ id: 'menu-other', account_id: 'acc_other', name: 'Other menu', description: null, tags: [], groups: [] });
    return doc;
  }

  test('deletes the accounts, users, keys, devices and menus the file lacks', async () => {
    const db = await freshDb();
    await importDataset(db, withOther(), { nowMs });
    expect(await counts(db)).toMatchObject({ accounts: 2, users: 3, api_keys: 3, devices: 3, device_access: 5, menus: 2 });
    const summary = await importDataset(db, example(), { nowMs, prune: true });
    expect(summary.pruned).toEqual({ accounts: 1, users: 1, api_keys: 1, devices: 1, menus: 1 });
    expect(await counts(db)).toMatchObject({ accounts: 1, users: 2, api_keys: 2, devices: 2, device_access: 3, menus: 1 });
    expect(await sqlValue(db, "SELECT count(*) FROM device_access WHERE user_id = 'usr_zoe'")).toBe(0);
    expect(await danglingReferences(db)).toEqual([]);
  });

  test('without --prune the same import keeps them', async () => {
    const db = await freshDb();
    await importDataset(db, withOther(), { nowMs });
    const before = await counts(db);
    const summary = await importDataset(db, example(), { nowMs });
    expect(summary.pruned).toEqual({ accounts: 0, users: 0, api_keys: 0, devices: 0, menus: 0 });
    // device 01's access list is replaced (Zoe's read access goes), nothing else changes in size.
    expect(await counts(db)).toEqual({ ...before, device_access: before.device_access! - 1 });
  });

  test('deleting an account cascades to records not listed anywhere in the file', async () => {
    const db = await freshDb();
    await importDataset(db, withOther(), { nowMs });
    // A key created outside any dataset (like `npm run keys -- create`) for Zoe.
    await sqlAll(
      db,
      "INSERT INTO api_keys (id, user_id, name, key_sha256, scopes, created_at) VALUES ('key_cli', 'usr_zoe', 'cli', ?, '[]', '2026-01-01T00:00:00.000000Z')",
      sha256('sk_cli_made_key_000000000000'),
    );
    await importDataset(db, example(), { nowMs, prune: true });
    expect(await sqlValue(db, "SELECT count(*) FROM api_keys WHERE user_id = 'usr_zoe'")).toBe(0);
    expect(await sqlValue(db, "SELECT count(*) FROM users WHERE account_id = 'acc_other'")).toBe(0);
    expect(await sqlValue(db, "SELECT count(*) FROM menus WHERE account_id = 'acc_other'")).toBe(0);
    expect(await danglingReferences(db)).toEqual([]);
  });

  test('with --prune a key may move from a record the file drops to a new record', async () => {
    const t = await app(example());
    const doc = example();
    doc.api_keys[0].id = 'key_ana_renamed';
    await importDataset(t.db, doc, { nowMs, prune: true });
    expect((await request(t.app).get('/v1/me').set('X-API-Key', exampleKey).expect(200)).body.key.id).toBe('key_ana_renamed');
    expect((await t.all('SELECT id FROM api_keys ORDER BY id')).map((r) => Object.values(r)[0])).toEqual(['key_ana_renamed', 'key_ben_menu']);
    // Without --prune the old record would keep the key, so the same file is refused.
    const other = example();
    other.api_keys[0].id = 'key_ana_third';
    await expectRejected(t.db, other, 'api_keys[0].key', /same key as existing api key "key_ana_renamed"/);
  });

  test('an empty dataset with --prune empties the catalog', async () => {
    const db = await freshDb();
    await importDataset(db, withOther(), { nowMs });
    const summary = await importDataset(db, {}, { nowMs, prune: true });
    expect(summary.pruned).toEqual({ accounts: 2, users: 3, api_keys: 3, devices: 3, menus: 2 });
    expect(await counts(db)).toMatchObject({ accounts: 0, users: 0, api_keys: 0, devices: 0, device_access: 0, menus: 0 });
  });

  test('a pruned key stops authenticating and a pruned device disappears', async () => {
    const t = await app(withOther());
    await request(t.app).get('/v1/me').set('X-API-Key', 'sk_test_zoe_other_account_00000').expect(200);
    const doc = withOther();
    doc.api_keys = doc.api_keys.filter((k: Doc) => k.id !== 'key_zoe');
    doc.devices = doc.devices.filter((d: Doc) => d.name !== 'Front counter');
    await importDataset(t.db, doc, { nowMs, prune: true });
    t.clock.advance(verifiedKeyTtlMs); // a verified key is trusted for this long without a look-up
    await request(t.app).get('/v1/me').set('X-API-Key', 'sk_test_zoe_other_account_00000').expect(401);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${exampleKey}`).expect(404, { message: 'Device not found' });
  });
});

describe('re-import replaces nested collections', () => {
  test('importing a menu replaces its whole group tree', async () => {
    const doc = example();
    const t = await app(doc);
    const menuId = doc.menus[0].id;
    const oldIds = ['0b7f3c1e-8a44-4a5b-9c0d-1e2f3a4b5c6d', '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', '4f5a6b7c-8d9e-4f0a-9b1c-2d3e4f5a6b7c'];
    let groups = await request(t.app).get(`/v1/groups?menus=${menuId}`).set('X-API-Key', exampleKey).expect(200);
    expect(groups.body.groups.map((g: Doc) => g.name)).toEqual(['Drinks', 'Burgers']);

    doc.menus[0].groups = [
      {
        id: 'new-group-1',
        name: 'Specials',
        description: null,
        tags: ['daypart:all'],
        groups: [],
        items: [{ id: 'new-item-1', name: 'Soup', description: null, price: 5, calories: 200, tags: [], inStock: true, items: [] }],
      },
    ];
    await importDataset(t.db, doc, { nowMs });
    groups = await request(t.app).get(`/v1/groups?menus=${menuId}`).set('X-API-Key', exampleKey).expect(200);
    expect(groups.body).toEqual({
      metadata: { groups: { total: 1 } },
      groups: [
        {
          metadata: { groups: { total: 0 }, items: { total: 1 } },
          id: 'new-group-1',
          name: 'Specials',
          description: null,
          tags: ['daypart:all'],
          groups: [],
          items: [
            {
              metadata: { items: { total: 0 } },
              id: 'new-item-1',
              name: 'Soup',
              description: null,
              price: 5,
              calories: 200,
              tags: [],
              inStock: true,
              items: [],
            },
          ],
        },
      ],
    });
    const stored = (await t.value('SELECT groups_json FROM menus WHERE id = ?', menuId)) as string;
    for (const id of oldIds) expect(stored).not.toContain(id);
    const byOldId = await request(t.app).get(`/v1/groups?groups=${oldIds[0]}`).set('X-API-Key', exampleKey).expect(200);
    expect(byOldId.body.groups).toEqual([]);
    const menus = await request(t.app).get('/v1/menus').set('X-API-Key', exampleKey).expect(200);
    expect(menus.body.menus[0].metadata).toEqual({ groups: { total: 1 } });

    // An empty list empties the tree.
    doc.menus[0].groups = [];
    await importDataset(t.db, doc, { nowMs });
    groups = await request(t.app).get(`/v1/groups?menus=${menuId}`).set('X-API-Key', exampleKey).expect(200);
    expect(groups.body).toEqual({ metadata: { groups: { total: 0 } }, groups: [] });
  });

  test('a device access list is replaced on re-import', async () => {
    const doc = example();
    const t = await app(doc);
    const benKey = 'sk_test_ben_devices_0000000000000';
    doc.api_keys[1] = { id: 'key_ben_menu', user_id: 'usr_ben', name: 'Ben', key: benKey, scopes: ['device:read'] };
    await importDataset(t.db, doc, { nowMs });
    const access = () => t.all("SELECT user_id, level FROM device_access WHERE device_id = 'a4:83:e7:1f:2b:01' ORDER BY user_id");
    expect(await access()).toEqual([
      { user_id: 'usr_ana', level: 'update' },
      { user_id: 'usr_ben', level: 'read' },
    ]);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${exampleKey}`).expect(200);

    doc.devices[0].access = [{ user_id: 'usr_ben', level: 'update' }];
    await importDataset(t.db, doc, { nowMs });
    expect(await access()).toEqual([{ user_id: 'usr_ben', level: 'update' }]);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${exampleKey}`).expect(404, { message: 'Device not found' });
    const ben = await request(t.app).get('/devices').set('Authorization', `Bearer ${benKey}`).expect(200);
    expect(ben.body.data.map((d: Doc) => d.id)).toEqual(['A4:83:E7:1F:2B:01']);

    // A device without `access` ends up with nobody.
    delete doc.devices[0].access;
    await importDataset(t.db, doc, { nowMs });
    expect(await access()).toEqual([]);
  });
});

describe('the bundled demo dataset', () => {
  test('imports cleanly with the promised shape', async () => {
    const db = await freshDb();
    const doc = demo();
    const summary = await importDataset(db, doc, { nowMs: Date.now() });
    expect(summary.upserted).toEqual({ accounts: 2, users: 4, api_keys: 5, devices: 40, menus: 4 });
    expect(await counts(db)).toMatchObject({ accounts: 2, users: 4, api_keys: 5, devices: 40, menus: 4 });
    expect(await danglingReferences(db)).toEqual([]);
    const depth = (groups: Doc[]): number => (groups.length === 0 ? 0 : 1 + Math.max(...groups.map((g) => depth(g.groups))));
    expect(Math.max(...doc.menus.map((m: Doc) => depth(m.groups)))).toBeGreaterThanOrEqual(3);
    // Its plain keys, too, are stored only hashed: in no row, and (SQLite) nowhere in the file.
    const plainKeys: string[] = doc.api_keys.map((key: Doc) => key.key);
    expect(await storedIn(db, plainKeys)).toEqual([]);
    if (db.engine === 'sqlite') for (const key of plainKeys) expect(bytesContain(db, key)).toBe(false);
    // And a second import is a no-op in counts.
    await importDataset(db, demo(), { nowMs: Date.now() });
    expect(await counts(db)).toMatchObject({ accounts: 2, users: 4, api_keys: 5, devices: 40, menus: 4 });
  });

  test('has online, offline and never-seen devices for the demo key', async () => {
    const t = await app(demo(), new ManualClock(Date.now()));
    const get = async (query: string) => (await request(t.app).get(`/devices${query}`).set('Authorization', `Bearer ${demoKey}`).expect(200)).body;
    const all = await get('?page_size=1000');
    const online = await get('?is_online=true&page_size=1000');
    const offline = await get('?is_online=false&page_size=1000');
    expect(online.total).toBeGreaterThan(0);
    expect(offline.total).toBeGreaterThan(0);
    expect(online.total + offline.total).toBe(all.total);
    expect(online.data.every((d: Doc) => d.is_online === true && d.last_heartbeat_at !== null)).toBe(true);
    expect(offline.data.every((d: Doc) => d.is_online === false)).toBe(true);
    const neverSeen = offline.data.filter((d: Doc) => d.last_heartbeat_at === null);
    const wentQuiet = offline.data.filter((d: Doc) => d.last_heartbeat_at !== null);
    expect(neverSeen.length).toBeGreaterThan(0);
    expect(wentQuiet.length).toBeGreaterThan(0);
    const me = await request(t.app).get('/v1/me').set('X-API-Key', demoKey).expect(200);
    expect(me.body.account.id).toBe('acc_harbor');
    const menus = await request(t.app).get('/v1/menus').set('X-API-Key', demoKey).expect(200);
    expect(menus.body.menus.length).toBeGreaterThanOrEqual(1);
  });
});

import { afterEach, describe, expect, test } from '@jest/globals';
import { verifiedKeyTtlMs } from '../../src/auth/embedded-keys.js';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { openDatabase, type Db } from '../../src/db/database.js';
import { DatasetError, importDataset, parseDataset, type DatasetIssue } from '../../src/dataset/import.js';
import { describeDatasetError } from '../../src/dataset/report.js';
import { demoDatasetPath } from '../../src/paths.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = any;

const examplePath = '/work/shared/spec/dataset.example.json';
const exampleKey = 'sk_test_harbor_ana_0123456789abcdef';
const demoKey = 'sk_demo_harbor_ana_all_0123456789';
const nowMs = Date.parse('2026-06-01T12:00:00.250Z');

/** A fresh, mutable copy of the contract's example dataset. */
const example = (): Doc => JSON.parse(readFileSync(examplePath, 'utf8'));
const demo = (): Doc => JSON.parse(readFileSync(demoDatasetPath, 'utf8'));
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const iso = (ms: number) => formatMicros(ms * 1000);

const dbs: Db[] = [];
const apps: TestApp[] = [];
function freshDb(): Db {
  const db = openDatabase(':memory:');
  dbs.push(db);
  return db;
}
function app(dataset: Doc, clock = new ManualClock(nowMs)): TestApp {
  const t = buildTestApp({ dataset, clock });
  apps.push(t);
  return t;
}
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
  for (const db of dbs.splice(0)) if (db.open) db.close();
});

function tables(db: Db): string[] {
  return db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    .pluck()
    .all() as string[];
}

/** Every row of every table (sorted), the schema and the schema version: a full logical dump. */
function dump(db: Db): string {
  const out: Record<string, unknown> = {
    user_version: db.pragma('user_version', { simple: true }),
    schema: db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name').all(),
  };
  for (const table of tables(db)) {
    out[table] = (db.prepare(`SELECT * FROM "${table}"`).all() as unknown[]).map((row) => JSON.stringify(row)).sort();
  }
  return JSON.stringify(out, null, 1);
}

function counts(db: Db): Record<string, number> {
  return Object.fromEntries(
    tables(db).map((table) => [table, db.prepare(`SELECT count(*) FROM "${table}"`).pluck().get() as number]),
  );
}

/** Runs an import that must fail; returns its DatasetError. */
function importError(db: Db, doc: Doc, prune = false): DatasetError {
  try {
    importDataset(db, doc, { nowMs, prune });
  } catch (err) {
    expect(err).toBeInstanceOf(DatasetError);
    return err as DatasetError;
  }
  throw new Error('import did not fail');
}

/** Asserts a failed import names `path` and left the database exactly as it was. */
function expectRejected(db: Db, doc: Doc, path: string, message?: RegExp, prune = false): DatasetIssue[] {
  const before = dump(db);
  const bytesBefore = db.serialize();
  const err = importError(db, doc, prune);
  expect(err.issues.map((i) => i.path)).toContain(path);
  if (message) expect(err.issues.find((i) => i.path === path)!.message).toMatch(message);
  expect(dump(db)).toBe(before);
  expect(db.serialize().equals(bytesBefore)).toBe(true);
  return err.issues;
}

describe('the example dataset (CONTRACT 7)', () => {
  test('imports, and reports what it upserted', () => {
    const db = freshDb();
    const summary = importDataset(db, example(), { nowMs });
    expect(summary).toEqual({
      upserted: { accounts: 1, users: 2, api_keys: 2, devices: 2, menus: 1 },
      pruned: { accounts: 0, users: 0, api_keys: 0, devices: 0, menus: 0 },
    });
    expect(counts(db)).toMatchObject({ accounts: 1, users: 2, api_keys: 2, devices: 2, device_access: 3, menus: 1 });
    // Device ids are stored lower case, whatever case the file used.
    expect(db.prepare('SELECT id FROM devices ORDER BY id').pluck().all()).toEqual(['a4:83:e7:1f:2b:01', 'a4:83:e7:1f:2b:02']);
    expect(db.pragma('foreign_key_check')).toEqual([]);
  });

  test('parseDataset accepts it and fills defaults', () => {
    const parsed = parseDataset({ accounts: [{ id: 'acc', name: 'A' }] });
    expect(parsed).toMatchObject({ accounts: [{ id: 'acc', name: 'A' }], users: [], api_keys: [], devices: [], menus: [] });
    expect(parseDataset(example()).devices[1]!.published_at).toBeNull();
  });

  test('relative timestamps resolve against nowMs', () => {
    const db = freshDb();
    importDataset(db, example(), { nowMs });
    const row = (id: string) => db.prepare('SELECT * FROM devices WHERE id = ?').get(id) as Record<string, unknown>;
    expect(row('a4:83:e7:1f:2b:01')).toMatchObject({
      published_at: iso(nowMs - 2 * 3600_000),
      last_heartbeat_at: iso(nowMs - 30_000),
      updated_at: iso(nowMs - 3600_000),
    });
    expect(row('a4:83:e7:1f:2b:01').last_heartbeat_at).toBe('2026-06-01T11:59:30.250000Z');
    expect(row('a4:83:e7:1f:2b:02')).toMatchObject({
      published_at: null,
      last_heartbeat_at: '2026-05-29T12:00:00.250000Z',
      updated_at: '2026-05-29T12:00:00.250000Z',
    });
    // Another import time moves them.
    importDataset(db, example(), { nowMs: nowMs + 60_000 });
    expect(row('a4:83:e7:1f:2b:01').last_heartbeat_at).toBe('2026-06-01T12:00:30.250000Z');
  });

  test('microseconds are kept, in the database and over HTTP; offsets are normalised', async () => {
    const doc = example();
    doc.devices[1].created_at = '2025-02-01T16:30:00.000001+02:00';
    const db = freshDb();
    importDataset(db, doc, { nowMs });
    const row = db.prepare("SELECT registered_at, created_at FROM devices WHERE id = 'a4:83:e7:1f:2b:01'").get();
    expect(row).toEqual({ registered_at: '2025-01-10T09:00:00.123456Z', created_at: '2025-01-10T09:00:00.123456Z' });
    expect(db.prepare("SELECT registered_at, created_at FROM devices WHERE id = 'a4:83:e7:1f:2b:02'").get()).toEqual({
      registered_at: '2025-02-01T14:30:00.000001Z',
      created_at: '2025-02-01T14:30:00.000001Z',
    });

    const t = app(doc);
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
  test('a plain key is stored only as its SHA-256: it appears in no column of any table', () => {
    const db = freshDb();
    importDataset(db, example(), { nowMs });
    expect(db.prepare("SELECT key_sha256 FROM api_keys WHERE id = 'key_ana_all'").pluck().get()).toBe(sha256(exampleKey));
    let columnsScanned = 0;
    for (const table of tables(db)) {
      for (const { name } of db.pragma(`table_info("${table}")`) as Array<{ name: string }>) {
        columnsScanned += 1;
        const hits = db
          .prepare(`SELECT count(*) FROM "${table}" WHERE instr(CAST("${name}" AS TEXT), ?) > 0`)
          .pluck()
          .get(exampleKey);
        expect({ table, column: name, hits }).toEqual({ table, column: name, hits: 0 });
      }
    }
    expect(columnsScanned).toBeGreaterThan(30);
    // Not even in a free page of the database image.
    expect(db.serialize().includes(Buffer.from(exampleKey))).toBe(false);
  });

  test('the imported plain key then authenticates over HTTP, in both areas', async () => {
    const t = app(example());
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
    const t = app(doc);
    expect(t.db.prepare("SELECT key_sha256 FROM api_keys WHERE id = 'key_ben_menu'").pluck().get()).toBe(sha256(secretKey));
    const me = await request(t.app).get('/v1/me').set('X-API-Key', secretKey).expect(200);
    expect(me.body.key).toEqual({ id: 'key_ben_menu', name: 'Menu board only', scopes: ['menu:read'] });
    // menu:read only: the device area refuses it.
    await request(t.app).get('/devices').set('Authorization', `Bearer ${secretKey}`).expect(403, { message: 'Invalid scopes' });
  });

  test('duplicate scopes are stored once', () => {
    const doc = example();
    doc.api_keys[0].scopes = ['menu:read', 'menu:read', 'device:read'];
    const db = freshDb();
    importDataset(db, doc, { nowMs });
    expect(JSON.parse(db.prepare("SELECT scopes FROM api_keys WHERE id = 'key_ana_all'").pluck().get() as string)).toEqual([
      'menu:read',
      'device:read',
    ]);
  });

  test('two keys in the file may swap their keys on re-import', async () => {
    const keyA = 'sk_swap_test_key_a_000000000000';
    const keyB = 'sk_swap_test_key_b_000000000000';
    const doc = example();
    doc.api_keys[1] = { id: 'key_ben_menu', user_id: 'usr_ben', name: 'Ben', key: keyB, scopes: ['menu:read'] };
    doc.api_keys[0].key = keyA;
    const t = app(doc);
    doc.api_keys[0].key = keyB;
    doc.api_keys[1].key = keyA;
    importDataset(t.db, doc, { nowMs });
    expect((await request(t.app).get('/v1/me').set('X-API-Key', keyA).expect(200)).body.key.id).toBe('key_ben_menu');
    expect((await request(t.app).get('/v1/me').set('X-API-Key', keyB).expect(200)).body.key.id).toBe('key_ana_all');
  });

  test('a key may move from one record to a new one in the same file', async () => {
    const doc = example();
    const t = app(doc);
    const moved = { ...doc.api_keys[0], id: 'key_ana_new', name: 'Moved' };
    doc.api_keys[0] = { ...doc.api_keys[0], key: 'sk_replacement_key_for_old_record_1' };
    doc.api_keys.unshift(moved);
    importDataset(t.db, doc, { nowMs });
    expect((await request(t.app).get('/v1/me').set('X-API-Key', exampleKey).expect(200)).body.key.id).toBe('key_ana_new');
    expect(t.db.prepare("SELECT count(*) FROM api_keys WHERE key_sha256 LIKE 'moving:%'").pluck().get()).toBe(0);
  });
});

describe('upsert by id', () => {
  test('importing the same file twice changes no counts and no data (menu revision aside)', () => {
    const db = freshDb();
    importDataset(db, example(), { nowMs });
    const strip = (text: string) => text.replace(/\\"revision\\":\d+/g, '');
    const before = dump(db);
    const countsBefore = counts(db);
    importDataset(db, example(), { nowMs });
    expect(counts(db)).toEqual(countsBefore);
    expect(strip(dump(db))).toBe(strip(before));
  });

  test('a changed name updates the record in place', async () => {
    const doc = example();
    const t = app(doc);
    doc.accounts[0].name = 'Harbor Street Diner & Bar';
    doc.users[0].name = 'Ana O.';
    doc.api_keys[0].name = 'Renamed key';
    doc.devices[0].name = 'Front counter (left)';
    doc.menus[0].name = 'All day long';
    const before = counts(t.db);
    importDataset(t.db, doc, { nowMs });
    expect(counts(t.db)).toEqual(before);
    expect(t.db.prepare("SELECT name FROM users WHERE id = 'usr_ana'").pluck().get()).toBe('Ana O.');
    const me = await request(t.app).get('/v1/me').set('X-API-Key', exampleKey).expect(200);
    expect(me.body).toMatchObject({ key: { name: 'Renamed key' }, account: { name: 'Harbor Street Diner & Bar' } });
    const device = await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${exampleKey}`).expect(200);
    expect(device.body.name).toBe('Front counter (left)');
    const menus = await request(t.app).get('/v1/menus').set('X-API-Key', exampleKey).expect(200);
    expect(menus.body.menus.map((m: Doc) => m.name)).toEqual(['All day long']);
  });

  test('a device id in another case updates the same device', () => {
    const doc = example();
    const db = freshDb();
    importDataset(db, doc, { nowMs });
    doc.devices[0].id = doc.devices[0].id.toLowerCase();
    doc.devices[0].name = 'Lower-case id';
    importDataset(db, doc, { nowMs });
    expect(db.prepare('SELECT count(*) FROM devices').pluck().get()).toBe(2);
    expect(db.prepare("SELECT name FROM devices WHERE id = 'a4:83:e7:1f:2b:01'").pluck().get()).toBe('Lower-case id');
  });

  test('a file with only some records leaves the others alone (no prune)', () => {
    const db = freshDb();
    importDataset(db, example(), { nowMs });
    const before = counts(db);
    importDataset(db, { accounts: [{ id: 'acc_new', name: 'New' }] }, { nowMs });
    expect(counts(db)).toEqual({ ...before, accounts: 2 });
    // A new file may refer to records that already exist in the database.
    importDataset(db, { users: [{ id: 'usr_cy', account_id: 'acc_harbor', name: 'Cy' }] }, { nowMs });
    expect(db.prepare("SELECT account_id FROM users WHERE id = 'usr_cy'").pluck().get()).toBe('acc_harbor');
  });
});

describe('invalid datasets: the path is named and nothing is written', () => {
  /** Each case runs against a database that already holds the example. */
  function populated(): Db {
    const db = freshDb();
    importDataset(db, example(), { nowMs });
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
    ['a missing item field deep in the tree', (d) => delete d.menus[0].groups[0].groups[0].items[0].items[1].inStock, 'menus[0].groups[0].groups[0].items[0].items[1].inStock', /boolean/],
    ['a duplicate group id across the tree', (d) => (d.menus[0].groups[1].id = d.menus[0].groups[0].groups[0].id), 'menus[0].groups[1].id', /duplicate group id/],
    ['a wrong type', (d) => (d.devices[0].offline_startup_delay_minutes = '5'), 'devices[0].offline_startup_delay_minutes', /number/],
    ['an empty name', (d) => (d.accounts[0].name = ''), 'accounts[0].name', /non-empty/],
    ['a bad screen resolution', (d) => (d.devices[0].screen_resolution = 'full hd'), 'devices[0].screen_resolution', /<width>x<height>/],
    ['an unknown scope', (d) => (d.api_keys[0].scopes = ['device:write']), 'api_keys[0].scopes[0]', /device:read/],
    ['a key that is too short', (d) => (d.api_keys[0].key = 'short'), 'api_keys[0].key', /16-256/],
    ['a key with a space', (d) => (d.api_keys[0].key = 'sk test with spaces 0123456789'), 'api_keys[0].key', /16-256/],
    ['a malformed key_sha256', (d) => (d.api_keys[1].key_sha256 = 'abc'), 'api_keys[1].key_sha256', /64 hex/],
    ['both key and key_sha256', (d) => (d.api_keys[0].key_sha256 = sha256('x')), 'api_keys[0]', /exactly one/],
    ['neither key nor key_sha256', (d) => delete d.api_keys[0].key, 'api_keys[0]', /exactly one/],
    ['two keys with the same key', (d) => (d.api_keys[1] = { ...d.api_keys[1], key_sha256: sha256(exampleKey) }), 'api_keys[1].key_sha256', /same key as api key "key_ana_all"/],
    ['a non-array section', (d) => (d.devices = {}), 'devices', /array/],
  ])('%s', (_why, mutate, path, message) => {
    const db = populated();
    const doc = example();
    mutate(doc);
    expectRejected(db, doc, path, message);
  });

  test.each([null, [], 'dataset', 42])('a document that is not an object (%j)', (doc) => {
    const db = populated();
    expectRejected(db, doc, '$');
  });

  test('every problem is reported, not only the first, and the valid records are not written either', () => {
    const db = freshDb();
    const doc = example();
    doc.devices[1].registered_at = '2025-02-30T09:00:00Z';
    doc.devices[0].access[0].user_id = 'usr_nobody';
    doc.users.push({ id: 'usr_ana', account_id: 'acc_harbor', name: 'Dup' });
    // Schema problems stop before the reference checks run.
    let issues = expectRejected(db, doc, 'devices[1].registered_at');
    expect(issues).toHaveLength(1);
    doc.devices[1].registered_at = '2025-02-01T14:30:00Z';
    issues = expectRejected(db, doc, 'devices[0].access[0].user_id');
    expect(issues.map((i) => i.path).sort()).toEqual(['devices[0].access[0].user_id', 'users[2].id']);
    expect(counts(db)).toMatchObject({ accounts: 0, users: 0, api_keys: 0, devices: 0, menus: 0 });
  });

  test('a key already held by another record in the database is refused, without echoing it', () => {
    const db = populated();
    const doc = { api_keys: [{ id: 'key_thief', user_id: 'usr_ben', name: 'Copy', key: exampleKey, scopes: [] }] };
    const issues = expectRejected(db, doc, 'api_keys[0].key', /same key as existing api key "key_ana_all"/);
    expect(JSON.stringify(issues)).not.toContain(exampleKey);
  });

  test('with --prune, references must resolve inside the file', () => {
    const db = populated();
    // Fine without prune: usr_ben exists in the database...
    const doc = example();
    doc.users = doc.users.filter((u: Doc) => u.id !== 'usr_ben');
    importDataset(db, doc, { nowMs });
    // ...but prune would delete usr_ben, so the references to it are errors.
    const issues = expectRejected(db, doc, 'devices[0].access[1].user_id', /unknown user "usr_ben"/, true);
    expect(issues.map((i) => i.path)).toContain('api_keys[1].user_id');
  });

  test('a failure inside the write transaction rolls everything back, with and without prune', () => {
    const db = populated();
    importDataset(db, { accounts: [{ id: 'acc_extra', name: 'Extra' }] }, { nowMs });
    // The file is valid; the database refuses the last write (menus come after accounts, users,
    // keys and devices). A TEMP trigger lives outside the main schema the dump compares.
    db.exec(`CREATE TEMP TRIGGER refuse_menus BEFORE UPDATE ON main.menus
      BEGIN SELECT RAISE(ABORT, 'injected failure'); END`);
    const doc = example();
    doc.accounts[0].name = 'Changed';
    doc.devices[0].name = 'Changed';
    doc.devices[0].access = [{ user_id: 'usr_ben', level: 'read' }];
    doc.api_keys[0].key = 'sk_a_brand_new_key_0123456789';
    doc.menus[0].name = 'Changed';
    for (const prune of [false, true]) {
      const before = dump(db);
      const bytes = db.serialize();
      expect(() => importDataset(db, doc, { nowMs, prune })).toThrow('injected failure');
      expect(dump(db)).toBe(before);
      expect(db.serialize().equals(bytes)).toBe(true);
    }
    expect(db.prepare("SELECT name FROM accounts WHERE id = 'acc_extra'").pluck().get()).toBe('Extra');
    expect(db.prepare("SELECT key_sha256 FROM api_keys WHERE id = 'key_ana_all'").pluck().get()).toBe(sha256(exampleKey));
    // Once the obstacle is gone the same file imports.
    db.exec('DROP TRIGGER temp.refuse_menus');
    importDataset(db, doc, { nowMs, prune: true });
    expect(db.prepare("SELECT count(*) FROM accounts WHERE id = 'acc_extra'").pluck().get()).toBe(0);
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

  test('a real import error renders with its paths', () => {
    const doc = example();
    doc.devices[1].registered_at = 'yesterday';
    const text = describeDatasetError(importError(freshDb(), doc));
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

  test('deletes the accounts, users, keys, devices and menus the file lacks', () => {
    const db = freshDb();
    importDataset(db, withOther(), { nowMs });
    expect(counts(db)).toMatchObject({ accounts: 2, users: 3, api_keys: 3, devices: 3, device_access: 5, menus: 2 });
    const summary = importDataset(db, example(), { nowMs, prune: true });
    expect(summary.pruned).toEqual({ accounts: 1, users: 1, api_keys: 1, devices: 1, menus: 1 });
    expect(counts(db)).toMatchObject({ accounts: 1, users: 2, api_keys: 2, devices: 2, device_access: 3, menus: 1 });
    expect(db.prepare("SELECT count(*) FROM device_access WHERE user_id = 'usr_zoe'").pluck().get()).toBe(0);
    expect(db.pragma('foreign_key_check')).toEqual([]);
  });

  test('without --prune the same import keeps them', () => {
    const db = freshDb();
    importDataset(db, withOther(), { nowMs });
    const before = counts(db);
    const summary = importDataset(db, example(), { nowMs });
    expect(summary.pruned).toEqual({ accounts: 0, users: 0, api_keys: 0, devices: 0, menus: 0 });
    // device 01's access list is replaced (Zoe's read access goes), nothing else changes in size.
    expect(counts(db)).toEqual({ ...before, device_access: before.device_access! - 1 });
  });

  test('deleting an account cascades to records not listed anywhere in the file', () => {
    const db = freshDb();
    importDataset(db, withOther(), { nowMs });
    // A key created outside any dataset (like `npm run keys -- create`) for Zoe.
    db.prepare("INSERT INTO api_keys (id, user_id, name, key_sha256, scopes, created_at) VALUES ('key_cli', 'usr_zoe', 'cli', ?, '[]', '2026-01-01T00:00:00.000000Z')").run(sha256('sk_cli_made_key_000000000000'));
    importDataset(db, example(), { nowMs, prune: true });
    expect(db.prepare("SELECT count(*) FROM api_keys WHERE user_id = 'usr_zoe'").pluck().get()).toBe(0);
    expect(db.prepare("SELECT count(*) FROM users WHERE account_id = 'acc_other'").pluck().get()).toBe(0);
    expect(db.prepare("SELECT count(*) FROM menus WHERE account_id = 'acc_other'").pluck().get()).toBe(0);
    expect(db.pragma('foreign_key_check')).toEqual([]);
  });

  test('with --prune a key may move from a record the file drops to a new record', async () => {
    const t = app(example());
    const doc = example();
    doc.api_keys[0].id = 'key_ana_renamed';
    importDataset(t.db, doc, { nowMs, prune: true });
    expect((await request(t.app).get('/v1/me').set('X-API-Key', exampleKey).expect(200)).body.key.id).toBe('key_ana_renamed');
    expect(t.db.prepare('SELECT id FROM api_keys ORDER BY id').pluck().all()).toEqual(['key_ana_renamed', 'key_ben_menu']);
    // Without --prune the old record would keep the key, so the same file is refused.
    const other = example();
    other.api_keys[0].id = 'key_ana_third';
    expectRejected(t.db, other, 'api_keys[0].key', /same key as existing api key "key_ana_renamed"/);
  });

  test('an empty dataset with --prune empties the catalog', () => {
    const db = freshDb();
    importDataset(db, withOther(), { nowMs });
    const summary = importDataset(db, {}, { nowMs, prune: true });
    expect(summary.pruned).toEqual({ accounts: 2, users: 3, api_keys: 3, devices: 3, menus: 2 });
    expect(counts(db)).toMatchObject({ accounts: 0, users: 0, api_keys: 0, devices: 0, device_access: 0, menus: 0 });
  });

  test('a pruned key stops authenticating and a pruned device disappears', async () => {
    const t = app(withOther());
    await request(t.app).get('/v1/me').set('X-API-Key', 'sk_test_zoe_other_account_00000').expect(200);
    const doc = withOther();
    doc.api_keys = doc.api_keys.filter((k: Doc) => k.id !== 'key_zoe');
    doc.devices = doc.devices.filter((d: Doc) => d.name !== 'Front counter');
    importDataset(t.db, doc, { nowMs, prune: true });
    t.clock.advance(verifiedKeyTtlMs); // a verified key is trusted for this long without a look-up
    await request(t.app).get('/v1/me').set('X-API-Key', 'sk_test_zoe_other_account_00000').expect(401);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${exampleKey}`).expect(404, { message: 'Device not found' });
  });
});

describe('re-import replaces nested collections', () => {
  test("importing a menu replaces its whole group tree", async () => {
    const doc = example();
    const t = app(doc);
    const menuId = doc.menus[0].id;
    const oldIds = ['0b7f3c1e-8a44-4a5b-9c0d-1e2f3a4b5c6d', '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b', '4f5a6b7c-8d9e-4f0a-9b1c-2d3e4f5a6b7c'];
    let groups = await request(t.app).get(`/v1/groups?menus=${menuId}`).set('X-API-Key', exampleKey).expect(200);
    expect(groups.body.groups.map((g: Doc) => g.name)).toEqual(['Drinks', 'Burgers']);

    doc.menus[0].groups = [
      { id: 'new-group-1', name: 'Specials', description: null, tags: ['daypart:all'], groups: [], items: [
        { id: 'new-item-1', name: 'Soup', description: null, price: 5, calories: 200, tags: [], inStock: true, items: [] },
      ] },
    ];
    importDataset(t.db, doc, { nowMs });
    groups = await request(t.app).get(`/v1/groups?menus=${menuId}`).set('X-API-Key', exampleKey).expect(200);
    expect(groups.body).toEqual({
      metadata: { groups: { total: 1 } },
      groups: [
        {
          metadata: { groups: { total: 0 }, items: { total: 1 } },
          id: 'new-group-1', name: 'Specials', description: null, tags: ['daypart:all'], groups: [],
          items: [{ metadata: { items: { total: 0 } }, id: 'new-item-1', name: 'Soup', description: null, price: 5, calories: 200, tags: [], inStock: true, items: [] }],
        },
      ],
    });
    const stored = t.db.prepare('SELECT groups_json FROM menus WHERE id = ?').pluck().get(menuId) as string;
    for (const id of oldIds) expect(stored).not.toContain(id);
    const byOldId = await request(t.app).get(`/v1/groups?groups=${oldIds[0]}`).set('X-API-Key', exampleKey).expect(200);
    expect(byOldId.body.groups).toEqual([]);
    const menus = await request(t.app).get('/v1/menus').set('X-API-Key', exampleKey).expect(200);
    expect(menus.body.menus[0].metadata).toEqual({ groups: { total: 1 } });

    // An empty list empties the tree.
    doc.menus[0].groups = [];
    importDataset(t.db, doc, { nowMs });
    groups = await request(t.app).get(`/v1/groups?menus=${menuId}`).set('X-API-Key', exampleKey).expect(200);
    expect(groups.body).toEqual({ metadata: { groups: { total: 0 } }, groups: [] });
  });

  test('a device access list is replaced on re-import', async () => {
    const doc = example();
    const t = app(doc);
    const benKey = 'sk_test_ben_devices_0000000000000';
    doc.api_keys[1] = { id: 'key_ben_menu', user_id: 'usr_ben', name: 'Ben', key: benKey, scopes: ['device:read'] };
    importDataset(t.db, doc, { nowMs });
    const access = () => t.db.prepare("SELECT user_id, level FROM device_access WHERE device_id = 'a4:83:e7:1f:2b:01' ORDER BY user_id").all();
    expect(access()).toEqual([{ user_id: 'usr_ana', level: 'update' }, { user_id: 'usr_ben', level: 'read' }]);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${exampleKey}`).expect(200);

    doc.devices[0].access = [{ user_id: 'usr_ben', level: 'update' }];
    importDataset(t.db, doc, { nowMs });
    expect(access()).toEqual([{ user_id: 'usr_ben', level: 'update' }]);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${exampleKey}`).expect(404, { message: 'Device not found' });
    const ben = await request(t.app).get('/devices').set('Authorization', `Bearer ${benKey}`).expect(200);
    expect(ben.body.data.map((d: Doc) => d.id)).toEqual(['A4:83:E7:1F:2B:01']);

    // A device without `access` ends up with nobody.
    delete doc.devices[0].access;
    importDataset(t.db, doc, { nowMs });
    expect(access()).toEqual([]);
  });
});

describe('the bundled demo dataset', () => {
  test('imports cleanly with the promised shape', () => {
    const db = freshDb();
    const doc = demo();
    const summary = importDataset(db, doc, { nowMs: Date.now() });
    expect(summary.upserted).toEqual({ accounts: 2, users: 4, api_keys: 5, devices: 40, menus: 4 });
    expect(counts(db)).toMatchObject({ accounts: 2, users: 4, api_keys: 5, devices: 40, menus: 4 });
    expect(db.pragma('foreign_key_check')).toEqual([]);
    const depth = (groups: Doc[]): number => (groups.length === 0 ? 0 : 1 + Math.max(...groups.map((g) => depth(g.groups))));
    expect(Math.max(...doc.menus.map((m: Doc) => depth(m.groups)))).toBeGreaterThanOrEqual(3);
    // Its plain keys, too, are stored only hashed.
    const image = db.serialize();
    for (const key of doc.api_keys) expect(image.includes(Buffer.from(key.key))).toBe(false);
    // And a second import is a no-op in counts.
    importDataset(db, demo(), { nowMs: Date.now() });
    expect(counts(db)).toMatchObject({ accounts: 2, users: 4, api_keys: 5, devices: 40, menus: 4 });
  });

  test('has online, offline and never-seen devices for the demo key', async () => {
    const t = app(demo(), new ManualClock(Date.now()));
    const get = async (query: string) =>
      (await request(t.app).get(`/devices${query}`).set('Authorization', `Bearer ${demoKey}`).expect(200)).body;
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

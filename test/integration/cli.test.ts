import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { openDatabase } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations.js';
import { projectRoot } from '../../src/paths.js';
import { buildTestApp, sqlHelpers, type TestApp } from '../helpers/app.js';
import { postgresUrl } from '../helpers/engine.js';
import { ensureBuild } from '../helpers/processes.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = any;

const examplePath = join(projectRoot, 'test', 'fixtures', 'dataset.example.json');
const exampleKey = 'sk_test_harbor_ana_0123456789abcdef';
const demoKey = 'sk_demo_harbor_ana_all_0123456789';
const importCli = join(projectRoot, 'dist', 'src', 'cli', 'import.js');
const keysCli = join(projectRoot, 'dist', 'src', 'cli', 'keys.js');
const mainJs = join(projectRoot, 'dist', 'src', 'main.js');

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const example = (): Doc => JSON.parse(readFileSync(examplePath, 'utf8'));

let tmp: string;
const children = new Set<ChildProcess>();
const apps: TestApp[] = [];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-cli-test-'));
  await ensureBuild();
  for (const file of [importCli, keysCli, mainJs]) expect(existsSync(file)).toBe(true);
}, 180_000);

afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A clean environment: nothing from the test runner's own env leaks into the child's config. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'warn', ...env };
}

/** Runs a process to completion, killed after `timeoutMs`. */
function run(command: string, args: string[], env: Record<string, string>, timeoutMs = 30_000): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: projectRoot, env: childEnv(env), timeout: timeoutMs, killSignal: 'SIGKILL' });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

const node = (script: string, args: string[], env: Record<string, string>) => run(process.execPath, [script, ...args], env);

/** A new database path in the temp dir (the file does not exist yet). */
let dbCounter = 0;
function newDbPath(): string {
  dbCounter += 1;
  return join(tmp, `db-${dbCounter}`, 'connector.db');
}

function writeJson(name: string, doc: unknown): string {
  const file = join(tmp, name);
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}

/** Reads a database file from outside the CLI. */
function withDb<T>(path: string, fn: (db: Database.Database) => T): T {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

function tables(db: Database.Database): string[] {
  return db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
}

/** Full logical dump: schema, version and every row of every table. */
function dump(path: string): string {
  return withDb(path, (db) => {
    const out: Record<string, unknown> = {
      user_version: db.pragma('user_version', { simple: true }),
      schema: db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY type, name').all(),
    };
    for (const table of tables(db)) {
      out[table] = (db.prepare(`SELECT * FROM "${table}"`).all() as unknown[]).map((r) => JSON.stringify(r)).sort();
    }
    return JSON.stringify(out);
  });
}

function counts(path: string): Record<string, number> {
  return withDb(path, (db) => Object.fromEntries(tables(db).map((t) => [t, db.prepare(`SELECT count(*) FROM "${t}"`).pluck().get() as number])));
}

/** The database file and its WAL, as bytes, to look for a plain key anywhere on disk. */
function fileBytes(path: string): Buffer {
  return Buffer.concat([path, `${path}-wal`].filter(existsSync).map((f) => readFileSync(f)));
}

async function importFile(dbPath: string, file: string, ...flags: string[]): Promise<Result> {
  return node(importCli, [...flags, file], { DATABASE_PATH: dbPath });
}

/**
 * A new database holding the example dataset, as `npm run import` leaves it: the first call
 * imports it with the command once (checked as in the import tests), later ones copy that file,
 * a command-line process fewer each (about a second of CPU).
 */
let template: Promise<string> | undefined;
async function seeded(): Promise<string> {
  template ??= (async () => {
    const path = newDbPath();
    const result = await importFile(path, examplePath);
    expect([result.code, result.stderr]).toEqual([0, '']);
    return path;
  })();
  const source = await template;
  const dbPath = newDbPath();
  mkdirSync(dirname(dbPath));
  for (const suffix of ['', '-wal', '-shm']) if (existsSync(source + suffix)) copyFileSync(source + suffix, dbPath + suffix);
  return dbPath;
}

describe('npm run import (dist/src/cli/import.js)', () => {
  test('imports a dataset file, creating the database and its folder, and prints counts', async () => {
    const dbPath = newDbPath();
    const result = await importFile(dbPath, examplePath);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(`Imported ${examplePath} into ${dbPath}: 1 accounts, 2 users, 2 api_keys, 2 devices, 1 menus.`);
    expect(counts(dbPath)).toMatchObject({ accounts: 1, users: 2, api_keys: 2, devices: 2, device_access: 3, menus: 1 });
    expect(fileBytes(dbPath).includes(Buffer.from(exampleKey))).toBe(false);
    expect(withDb(dbPath, (db) => db.prepare("SELECT key_sha256 FROM api_keys WHERE id = 'key_ana_all'").pluck().get())).toBe(sha256(exampleKey));
  });

  test('a bad file exits 1 naming the JSON path and leaves the database unchanged', async () => {
    const dbPath = await seeded();
    const before = dump(dbPath);
    const doc = example();
    doc.accounts[0].name = 'Would be renamed';
    doc.devices[1].registered_at = '2025-02-30T09:00:00Z';
    doc.devices[0].access[0].user_id = 'usr_nobody';
    const result = await importFile(dbPath, writeJson('bad.json', doc));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Invalid dataset: 1 problem(s)');
    expect(result.stderr).toContain('  devices[1].registered_at: must be an ISO 8601 timestamp');
    expect(result.stderr).toContain('Nothing was imported.');
    expect(dump(dbPath)).toBe(before);

    // Fix the date: now the reference problem is reported, still all-or-nothing.
    doc.devices[1].registered_at = '2025-02-01T14:30:00Z';
    const second = await importFile(dbPath, writeJson('bad2.json', doc));
    expect(second.code).toBe(1);
    expect(second.stderr).toContain('  devices[0].access[0].user_id: unknown user "usr_nobody"');
    expect(dump(dbPath)).toBe(before);
  });

  test('a menu nested 5,000 groups deep exits 1 naming the JSON path and the limit, with no stack trace', async () => {
    const doc = example();
    doc.menus[0].groups = ['DEEP'];
    // Written as text: JSON.stringify itself recurses and would overflow on such a tree.
    const deep = `${'{"id":"g","name":"Level","groups":['.repeat(5000)}${']}'.repeat(5000)}`;
    const file = join(tmp, 'deep.json');
    writeFileSync(file, JSON.stringify(doc).replace('"DEEP"', deep));
    const result = await importFile(newDbPath(), file);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`  menus[0].groups[0]${'.groups[0]'.repeat(32)}: groups nest more than 32 levels deep here (the limit is 32)`);
    expect(result.stderr).not.toMatch(/Maximum call stack|\n\s+at /);
    expect(result.stderr).toContain('Nothing was imported.');
  });

  test('a file that is missing or not JSON exits 1 with a clear message', async () => {
    const dbPath = newDbPath();
    const missing = await importFile(dbPath, join(tmp, 'does-not-exist.json'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^Cannot read dataset .*does-not-exist\.json/);
    const notJson = join(tmp, 'broken.json');
    writeFileSync(notJson, '{"accounts": [');
    const broken = await importFile(dbPath, notJson);
    expect(broken.code).toBe(1);
    expect(broken.stderr).toMatch(/is not valid JSON/);
    expect(broken.stderr).toContain('Nothing was imported.');
  });

  test('no file, two files or an unknown flag print the usage and exit 1', async () => {
    const env = { DATABASE_PATH: newDbPath() };
    for (const args of [[], [examplePath, examplePath], ['--force', examplePath]]) {
      const result = await node(importCli, args, env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('Usage: npm run import -- [--prune] <dataset.json>');
    }
  });

  test('a bad configuration exits 1 with the one line naming the variable', async () => {
    const result = await node(importCli, [examplePath], { DATABASE_PATH: newDbPath(), LOG_LEVEL: 'loud' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^Invalid configuration: LOG_LEVEL /)]);
  });

  test('--prune deletes what the file lacks; without it, records stay', async () => {
    const dbPath = newDbPath();
    const bigger = example();
    bigger.accounts.push({ id: 'acc_other', name: 'Other' });
    bigger.users.push({ id: 'usr_zoe', account_id: 'acc_other', name: 'Zoe' });
    bigger.api_keys.push({ id: 'key_zoe', user_id: 'usr_zoe', name: 'Zoe', key: 'sk_test_zoe_other_account_00000', scopes: [] });
    bigger.devices.push({ ...bigger.devices[1], id: 'b0:00:00:00:00:01', access: [{ user_id: 'usr_zoe', level: 'read' }] });
    bigger.menus.push({ id: 'menu-other', account_id: 'acc_other', name: 'Other', groups: [] });
    expect((await importFile(dbPath, writeJson('bigger.json', bigger))).code).toBe(0);
    const full = { accounts: 2, users: 3, api_keys: 3, devices: 3, menus: 2 };
    expect(counts(dbPath)).toMatchObject(full);

    const keep = await importFile(dbPath, examplePath);
    expect(keep.code).toBe(0);
    expect(keep.stdout).not.toContain('Pruned');
    expect(counts(dbPath)).toMatchObject(full);

    const pruned = await importFile(dbPath, examplePath, '--prune');
    expect(pruned.stderr).toBe('');
    expect(pruned.code).toBe(0);
    expect(pruned.stdout).toContain('Pruned: 1 accounts, 1 users, 1 api_keys, 1 devices, 1 menus.');
    expect(counts(dbPath)).toMatchObject({ accounts: 1, users: 2, api_keys: 2, devices: 2, device_access: 3, menus: 1 });
  });

  test('with DATABASE_URL it migrates a fresh PostgreSQL database and imports into it', async () => {
    // A database of its own on the local server, with no schema yet; dropped afterwards.
    const name = `t_cli_${randomBytes(6).toString('hex')}`;
    const admin = async (text: string) => {
      const client = new pg.Client({ connectionString: postgresUrl() });
      await client.connect();
      try {
        await client.query(text);
      } finally {
        await client.end();
      }
    };
    await admin(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
    try {
      const url = new URL(postgresUrl());
      url.pathname = `/${name}`;
      const result = await node(importCli, [examplePath], { DATABASE_URL: url.href, CONNECTOR_SECRET: 'c3'.repeat(32) });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.trim()).toBe(`Imported ${examplePath} into PostgreSQL: 1 accounts, 2 users, 2 api_keys, 2 devices, 1 menus.`);

      const db = await openDatabase({ url: url.href, poolSize: 1 });
      try {
        const { all, value } = sqlHelpers(db);
        expect(await value('SELECT version FROM schema_version')).toBe(migrations.length);
        const count = (table: string) => value(`SELECT count(*) FROM ${table}`);
        expect({
          accounts: await count('accounts'),
          users: await count('users'),
          api_keys: await count('api_keys'),
          devices: await count('devices'),
          device_access: await count('device_access'),
          menus: await count('menus'),
        }).toEqual({ accounts: 1, users: 2, api_keys: 2, devices: 2, device_access: 3, menus: 1 });
        expect(await value("SELECT key_sha256 FROM api_keys WHERE id = 'key_ana_all'")).toBe(sha256(exampleKey));
        expect((await all<{ id: string }>('SELECT id FROM devices ORDER BY id')).map((r) => r.id)).toEqual(['a4:83:e7:1f:2b:01', 'a4:83:e7:1f:2b:02']);
        // The plain key is in no row of any table.
        const tables = (await db.kysely.introspection.getTables()).filter((t) => t.schema === 'public').map((t) => t.name);
        expect(tables).toEqual(expect.arrayContaining(['accounts', 'users', 'api_keys', 'devices', 'device_access', 'menus', 'schema_version']));
        for (const table of tables) {
          for (const row of await all(`SELECT * FROM "${table}"`)) expect(JSON.stringify(row)).not.toContain(exampleKey);
        }
      } finally {
        await db.close();
      }
    } finally {
      await admin(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    }
  });

  test('a database failure in the middle of the write exits non-zero and changes nothing', async () => {
    const dbPath = await seeded();
    // A trigger makes the last write of the transaction (menus) fail.
    const db = new Database(dbPath);
    db.exec("CREATE TRIGGER refuse_menus BEFORE UPDATE ON menus BEGIN SELECT RAISE(ABORT, 'injected failure'); END");
    db.close();
    const before = dump(dbPath);
    const doc = example();
    doc.accounts[0].name = 'Changed';
    doc.devices[0].name = 'Changed';
    const result = await importFile(dbPath, writeJson('valid-but-refused.json', doc), '--prune');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('injected failure');
    expect(dump(dbPath)).toBe(before);
  });
});

describe('npm run keys (dist/src/cli/keys.js)', () => {
  test('create prints a key once, stores only its hash, and the key works', async () => {
    const dbPath = await seeded();
    const result = await node(keysCli, ['create', '--user', 'usr_ana', '--scopes', 'device:read', '--name', 'Zapier'], {
      DATABASE_PATH: dbPath,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    const key = lines.at(-1)!;
    expect(key).toMatch(/^sk_live_[A-Za-z0-9_-]{32}$/);
    expect(result.stdout.split(key)).toHaveLength(2); // printed exactly once
    const id = /Created key (key_[0-9a-f]{16}) for user usr_ana with scopes device:read\./.exec(result.stdout)?.[1];
    expect(id).toBeDefined();

    const row = withDb(dbPath, (db) => db.prepare('SELECT * FROM api_keys WHERE id = ?').get(id)) as Record<string, string>;
    expect(row).toMatchObject({ user_id: 'usr_ana', name: 'Zapier', key_sha256: sha256(key), scopes: '["device:read"]' });
    expect(row.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(fileBytes(dbPath).includes(Buffer.from(key))).toBe(false);

    const t = await buildTestApp({ databasePath: dbPath });
    apps.push(t);
    const me = await request(t.app).get('/v1/me').set('X-API-Key', key).expect(200);
    expect(me.body).toEqual({
      key: { id, name: 'Zapier', scopes: ['device:read'] },
      account: { id: 'acc_harbor', name: 'Harbor Street Diner' },
    });
    const devices = await request(t.app).get('/devices').set('Authorization', `Bearer ${key}`).expect(200);
    expect(devices.body.total).toBe(2);
    await request(t.app)
      .get('/v1/menus')
      .set('X-API-Key', key)
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] });
  });

  test('two creates give two different keys; several scopes and duplicates are accepted', async () => {
    const dbPath = await seeded();
    const args = ['create', '--user', 'usr_ben', '--scopes', 'menu:read, hooks:write,menu:read'];
    const a = await node(keysCli, args, { DATABASE_PATH: dbPath });
    const b = await node(keysCli, args, { DATABASE_PATH: dbPath });
    expect([a.code, b.code]).toEqual([0, 0]);
    const keyA = a.stdout.trim().split('\n').at(-1);
    const keyB = b.stdout.trim().split('\n').at(-1);
    expect(keyA).not.toBe(keyB);
    const scopes = withDb(dbPath, (db) =>
      db.prepare("SELECT scopes FROM api_keys WHERE user_id = 'usr_ben' AND id LIKE 'key\\_%' ESCAPE '\\' AND id != 'key_ben_menu'").pluck().all(),
    );
    expect(scopes).toEqual(['["menu:read","hooks:write"]', '["menu:read","hooks:write"]']);
  });

  test('an unknown scope or user exits 1 with a clear message and creates nothing', async () => {
    const dbPath = await seeded();
    const before = dump(dbPath);
    const env = { DATABASE_PATH: dbPath };
    const scope = await node(keysCli, ['create', '--user', 'usr_ana', '--scopes', 'device:read,device:write'], env);
    expect(scope.code).toBe(1);
    expect(scope.stdout).toBe('');
    expect(scope.stderr.trim()).toBe('Unknown scope(s): device:write; use device:read, menu:read, hooks:write');
    const none = await node(keysCli, ['create', '--user', 'usr_ana', '--scopes', ' , '], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('Unknown scope(s): (none given)');
    const user = await node(keysCli, ['create', '--user', 'usr_nobody', '--scopes', 'device:read'], env);
    expect(user.code).toBe(1);
    expect(user.stdout).toBe('');
    expect(user.stderr.trim()).toBe('Unknown user "usr_nobody"');
    const missing = await node(keysCli, ['create', '--user', 'usr_ana'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('Usage:');
    expect(dump(dbPath)).toBe(before);
  });

  test('list shows keys (optionally per user) without secrets; revoke refuses one from then on, and may be repeated', async () => {
    const dbPath = await seeded();
    const env = { DATABASE_PATH: dbPath };
    const created = await node(keysCli, ['create', '--user', 'usr_ben', '--scopes', 'device:read'], env);
    const newKey = created.stdout.trim().split('\n').at(-1)!;
    const newId = /Created key (\S+) /.exec(created.stdout)![1]!;

    const list = await node(keysCli, ['list'], env);
    expect(list.code).toBe(0);
    const lines = list.stdout
      .trim()
      .split('\n')
      .map((line) => line.split('\t'));
    // id, user, scopes, name, then prefix, status, expiry, last use and own limit.
    const rows = lines.map((row) => row.slice(0, 4));
    expect(rows).toHaveLength(3);
    expect(lines.find((row) => row[0] === newId)!.slice(4)).toEqual([newKey.slice(0, 8), 'active', '-', '-', '-']);
    expect(rows).toContainEqual(['key_ana_all', 'usr_ana', 'device:read,menu:read,hooks:write', 'Automation (all scopes)']);
    expect(rows).toContainEqual(['key_ben_menu', 'usr_ben', 'menu:read', 'Menu board only']);
    expect(rows).toContainEqual([newId, 'usr_ben', 'device:read', 'Created with npm run keys']);
    expect(list.stdout).not.toContain(newKey);
    expect(list.stdout).not.toContain(sha256(newKey));

    const ben = await node(keysCli, ['list', '--user', 'usr_ben'], env);
    expect(
      ben.stdout
        .trim()
        .split('\n')
        .map((l) => l.split('\t')[0])
        .sort(),
    ).toEqual(['key_ben_menu', newId].sort());
    const nobody = await node(keysCli, ['list', '--user', 'usr_nobody'], env);
    expect(nobody.stdout.trim()).toBe('No keys.');

    const revoke = await node(keysCli, ['revoke', newId], env);
    expect(revoke.code).toBe(0);
    expect(revoke.stdout.trim()).toBe(`Revoked key ${newId}.`);
    expect(withDb(dbPath, (db) => db.prepare('SELECT revoked_at FROM api_keys WHERE id = ?').pluck().get(newId))).toMatch(/^\d{4}-/);
    const t = await buildTestApp({ databasePath: dbPath });
    apps.push(t);
    await request(t.app).get('/v1/me').set('X-API-Key', newKey).expect(401, { message: 'API key revoked' });
    await request(t.app).get('/v1/me').set('X-API-Key', exampleKey).expect(200);

    const again = await node(keysCli, ['revoke', newId], env);
    expect(again.code).toBe(0);
    const unknown = await node(keysCli, ['revoke', 'key_nobody'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr.trim()).toBe('Unknown key "key_nobody"');
  }, 60_000); // six CLI processes one after another: seconds each on a busy machine

  test('create with --expires and --rate-limit, then roll: the new key is printed once, the old one expires after the grace', async () => {
    const dbPath = await seeded();
    const env = { DATABASE_PATH: dbPath };
    const created = await node(keysCli, ['create', '--user', 'usr_ben', '--scopes', 'menu:read', '--expires', 'now+30d', '--rate-limit', '50'], env);
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/It expires at \d{4}-.*\nIts rate limit is 50 requests a minute\./);
    const oldKey = created.stdout.trim().split('\n').at(-1)!;
    const oldId = /Created key (\S+) /.exec(created.stdout)![1]!;
    const bad = await node(keysCli, ['create', '--user', 'usr_ben', '--scopes', 'menu:read', '--rate-limit', '0'], env);
    expect([bad.code, bad.stderr.trim()]).toEqual([1, '--rate-limit: rate_limit_per_minute must be at least 1']);
    const rolled = await node(keysCli, ['roll', oldId, '--grace', '0'], env);
    expect(rolled.code).toBe(0);
    const newKey = rolled.stdout.trim().split('\n').at(-1)!;
    expect(newKey).toMatch(/^sk_live_/);
    expect(rolled.stdout.split(newKey)).toHaveLength(2);
    expect(rolled.stdout).not.toContain(oldKey);
    const t = await buildTestApp({ databasePath: dbPath });
    apps.push(t);
    t.clock.ms = Date.now() + 1000;
    await request(t.app).get('/v1/me').set('X-API-Key', oldKey).expect(401, { message: 'API key expired' });
    const me = await request(t.app).get('/v1/me').set('X-API-Key', newKey).expect(200);
    expect(me.headers['ratelimit-policy']).toBe('"default";q=50;w=60');
  }, 60_000);

  test('an unknown command prints the usage and exits 1', async () => {
    const dbPath = await seeded();
    for (const args of [[], ['rotate'], ['revoke'], ['revoke', 'a', 'b']]) {
      const result = await node(keysCli, args, { DATABASE_PATH: dbPath });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('npm run keys -- create --user <user id>');
    }
  });
});

describe('the server (dist/src/main.js)', () => {
  interface Server {
    child: ChildProcess;
    port: number;
    stdout: () => string;
    stderr: () => string;
    exited: Promise<Result>;
  }

  /** Starts main.js and resolves once the JSON `listening` log line (and the banner, if expected) arrived. */
  function startServer(env: Record<string, string>, waitFor: RegExp | null, timeoutMs = 20_000): Promise<Server> {
    const child = spawn(process.execPath, [mainJs], {
      cwd: projectRoot,
      env: childEnv({ PORT: '0', LOG_LEVEL: 'info', ...env }),
      timeout: 60_000, // hard bound on the process whatever happens to the test
      killSignal: 'SIGKILL',
    });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    const exited = new Promise<Result>((resolve) =>
      child.on('close', (code, signal) => {
        children.delete(child);
        resolve({ code, signal, stdout, stderr });
      }),
    );
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`server did not start in ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
      }, timeoutMs);
      const check = () => {
        const listening = stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { msg?: string; port?: number })
          .find((entry) => entry.msg === 'listening');
        if (listening && (!waitFor || waitFor.test(stdout))) {
          clearTimeout(timer);
          resolve({ child, port: listening.port!, stdout: () => stdout, stderr: () => stderr, exited });
        }
      };
      child.stdout!.on('data', check);
      void exited.then((result) => {
        clearTimeout(timer);
        reject(new Error(`server exited early (${result.code})\nstdout:\n${result.stdout}\nstderr:\n${result.stderr}`));
      });
    });
  }

  /** Sends SIGTERM and returns how the process ended and how long it took. */
  async function stop(server: Server): Promise<Result & { ms: number }> {
    const started = Date.now();
    server.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    try {
      const result = await Promise.race([
        server.exited,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('no exit within 12 s of SIGTERM')), 12_000);
        }),
      ]);
      return { ...result, ms: Date.now() - started };
    } finally {
      clearTimeout(timer);
    }
  }

  test('on a fresh database: imports the demo, logs the port, prints the demo key, serves, stops on SIGTERM', async () => {
    const dbPath = newDbPath();
    const server = await startServer({ DATABASE_PATH: dbPath }, new RegExp(`Demo key .*${demoKey}`));
    expect(server.port).toBeGreaterThan(0);
    const logs = server
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    expect(logs).toContainEqual(expect.objectContaining({ msg: 'dataset imported', upserted: expect.objectContaining({ devices: 40 }) }));
    expect(server.stdout()).toContain(`http://localhost:${server.port}/devices?is_online=false`);

    const base = `http://127.0.0.1:${server.port}`;
    const health = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5_000) });
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'ok' });
    const me = await fetch(`${base}/v1/me`, { headers: { 'X-API-Key': demoKey }, signal: AbortSignal.timeout(5_000) });
    expect(me.status).toBe(200);
    const devices = await fetch(`${base}/devices?page_size=1000`, {
      headers: { Authorization: `Bearer ${demoKey}` },
      signal: AbortSignal.timeout(5_000),
    });
    expect(((await devices.json()) as { total: number }).total).toBeGreaterThan(0);

    const result = await stop(server);
    expect(result.signal).toBeNull();
    expect(result.code).toBe(0);
    // Promptly, not at the end of the 10 s grace period (8 s leaves room for a busy machine).
    expect(result.ms).toBeLessThan(8_000);
    expect(result.stdout).toMatch(/"msg":"stopped"/);
    // Keys never reach the logs (the banner prints the public demo key on purpose; no log line does).
    for (const line of result.stdout.split('\n').filter((l) => l.startsWith('{'))) expect(line).not.toContain(demoKey);
    expect(counts(dbPath)).toMatchObject({ devices: 40, api_keys: 5 });
  }, 40_000);

  test('a second start on the same database imports the untouched demo again, so its heartbeats count from that start', async () => {
    const dbPath = newDbPath();
    const first = await startServer({ DATABASE_PATH: dbPath }, /Demo key/);
    expect((await stop(first)).code).toBe(0);
    const second = await startServer({ DATABASE_PATH: dbPath }, /Demo key/);
    expect(second.stdout()).toContain('dataset imported');
    expect(second.stdout()).toContain('Heartbeat times count from this start');
    expect((await stop(second)).code).toBe(0);
    expect(counts(dbPath)).toMatchObject({ devices: 40, api_keys: 5 });
  }, 40_000);

  test('with DATASET the given file is imported and no demo banner is printed', async () => {
    const dbPath = newDbPath();
    const server = await startServer({ DATABASE_PATH: dbPath, DATASET: examplePath }, null);
    expect(server.stdout()).toContain('"msg":"dataset imported"');
    const me = await fetch(`http://127.0.0.1:${server.port}/v1/me`, {
      headers: { 'X-API-Key': exampleKey },
      signal: AbortSignal.timeout(5_000),
    });
    expect(me.status).toBe(200);
    expect((await stop(server)).code).toBe(0);
    expect(server.stdout()).not.toContain(demoKey);
    expect(counts(dbPath)).toMatchObject({ devices: 2 });
  }, 40_000);

  test('PORT=abc: exits 1 with a single stderr line naming PORT', async () => {
    const result = await run(process.execPath, [mainJs], { PORT: 'abc', DATABASE_PATH: newDbPath(), LOG_LEVEL: 'info' }, 15_000);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Invalid configuration: PORT must be an integer from 0 to 65535/);
  }, 20_000);

  test('a bad DATASET stops the start with the JSON path and exit 1, before listening', async () => {
    const dbPath = newDbPath();
    const doc = example();
    doc.devices[1].registered_at = '2025-02-30T09:00:00Z';
    const result = await run(
      process.execPath,
      [mainJs],
      {
        PORT: '0',
        DATABASE_PATH: dbPath,
        DATASET: writeJson('bad-start.json', doc),
        LOG_LEVEL: 'info',
      },
      15_000,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('devices[1].registered_at');
    expect(result.stdout).not.toContain('"msg":"listening"');
    expect(counts(dbPath)).toMatchObject({ accounts: 0, devices: 0 });
  }, 20_000);

  test('a DATASET with groups nested 40 deep stops the start with exit 1: the JSON path and the limit, no stack trace', async () => {
    const dbPath = newDbPath();
    const doc = example();
    let group: Doc = { id: 'g40', name: 'Level 40', groups: [], items: [] };
    for (let level = 39; level >= 1; level -= 1) group = { id: `g${level}`, name: `Level ${level}`, groups: [group], items: [] };
    doc.menus[0].groups = [group];
    const result = await run(
      process.execPath,
      [mainJs],
      {
        PORT: '0',
        DATABASE_PATH: dbPath,
        DATASET: writeJson('deep-start.json', doc),
        LOG_LEVEL: 'info',
      },
      15_000,
    );
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      'Invalid dataset: 1 problem(s)',
      `  menus[0].groups[0]${'.groups[0]'.repeat(32)}: groups nest more than 32 levels deep here (the limit is 32)`,
    ]);
    expect(`${result.stdout}${result.stderr}`).not.toMatch(/Maximum call stack|RangeError|\n\s+at |"stack"/);
    expect(result.stdout).not.toContain('"msg":"listening"');
    expect(counts(dbPath)).toMatchObject({ accounts: 0, menus: 0 });
  }, 20_000);
});

import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { decodeSecret } from '../../src/config.js';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { openDatabase } from '../../src/db/database.js';
import { migrations, renderMigration } from '../../src/db/migrations.js';
import { projectRoot } from '../../src/paths.js';
import { Child, mainJs } from '../helpers/child.js';
import { testEngine } from '../helpers/engine.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { ensureBuild } from '../helpers/processes.js';

/**
 * The operator's commands as real processes (docs/deploy.md): `npm run migrate` (and
 * `--dry-run`), `npm run rotate-secret` and the start-up check of stored secrets on the suite's
 * engine, and `npm run backup`, which copies SQLite online and on PostgreSQL says to use pg_dump.
 */

const cli = (name: string) => join(projectRoot, 'dist', 'src', 'cli', `${name}.js`);
const latest = migrations.length;
const oldSecret = 'a1'.repeat(32);
const newSecret = 'b2'.repeat(32);
const strangerSecret = 'c3'.repeat(32);
const box = (secret: string) => new SecretBox(decodeSecret(secret)!);
const sha = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

let tmp: string;
const databases: TestDatabase[] = [];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-operate-'));
  await ensureBuild();
}, 300_000);

afterAll(async () => {
  await Promise.all(databases.map((db) => db.drop()));
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 120_000);

async function runCli(name: string, args: string[], env: Record<string, string>) {
  return new Child(cli(name), { args, env, timeoutMs: 60_000 }).exited;
}

/** Where the suite's engine keeps a fresh database: a SQLite file, or a PostgreSQL database of its own. */
async function freshDatabase(): Promise<{ env: Record<string, string>; url?: string; path: string }> {
  const path = join(mkdtempSync(join(tmp, 'db-')), 'connector.db');
  if (testEngine === 'sqlite') return { env: { DATABASE_PATH: path }, path };
  const db = await createTestDatabase();
  databases.push(db);
  return { env: { DATABASE_URL: db.url, CONNECTOR_SECRET: newSecret }, url: db.url, path };
}

/** Brings a fresh database to schema version `version` with the migrations' own SQL. */
async function migrateTo(target: { url?: string; path: string }, version: number): Promise<void> {
  if (!target.url) {
    const raw = new Database(target.path);
    for (let i = 0; i < version; i += 1) raw.exec(renderMigration(i, 'sqlite'));
    raw.pragma(`user_version = ${version}`);
    raw.close();
    return;
  }
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  await client.query('CREATE TABLE schema_version (version INTEGER NOT NULL)');
  for (let i = 0; i < version; i += 1) await client.query(renderMigration(i, 'postgres'));
  await client.query('INSERT INTO schema_version (version) VALUES ($1)', [version]);
  await client.end();
}

async function tablesOf(target: { url?: string; path: string }): Promise<string[]> {
  if (!target.url) {
    const raw = new Database(target.path, { readonly: true });
    const rows = raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{ name: string }>;
    raw.close();
    return rows.map((r) => r.name);
  }
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  const { rows } = await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename");
  await client.end();
  return rows.map((r) => r.tablename as string);
}

describe('npm run migrate', () => {
  test('--dry-run prints one line per pending migration and changes nothing; the run applies them; then nothing is pending', async () => {
    const target = await freshDatabase();
    await migrateTo(target, 3);
    const tablesBefore = await tablesOf(target);
    const fileBefore = target.url ? '' : sha(target.path);

    const dry = await runCli('migrate', ['--dry-run'], target.env);
    expect(dry).toMatchObject({ code: 0, stderr: '' });
    const lines = dry.stdout.trim().split('\n');
    expect(lines.map((line) => Number(/^pending migration (\d+): \S/.exec(line)?.[1]))).toEqual(Array.from({ length: latest - 3 }, (_, i) => i + 4));
    expect(lines[0]).toBe('pending migration 4: CREATE TABLE readiness_probe');
    expect(lines[1]).toContain('ALTER TABLE hooks ADD COLUMN disabled_at; CREATE INDEX deliveries_event');
    expect(await tablesOf(target)).toEqual(tablesBefore);
    if (!target.url) expect(sha(target.path)).toBe(fileBefore);

    const applied = await runCli('migrate', [], target.env);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toContain(`applied migration ${latest}: `);
    expect(applied.stdout).toContain(`is at schema version ${latest}.`);
    expect(await tablesOf(target)).toEqual(expect.arrayContaining(['readiness_probe', 'catalog_origin', 'menu_groups']));

    const again = await runCli('migrate', ['--dry-run'], target.env);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(new RegExp(`^No pending migrations \\(.* is at schema version ${latest}\\)\\.\\n$`));
  }, 120_000);

  test('--dry-run on a database that does not exist yet lists every migration and creates nothing', async () => {
    const target = await freshDatabase();
    const dry = await runCli('migrate', ['--dry-run'], target.env);
    expect(dry.code).toBe(0);
    expect(dry.stdout.trim().split('\n')).toHaveLength(latest);
    expect(dry.stdout).toMatch(/^pending migration 1: CREATE TABLE accounts; CREATE TABLE users; CREATE INDEX users_account;/);
    if (target.url) expect(await tablesOf(target)).toEqual([]);
    else expect(existsSync(target.path)).toBe(false);
  }, 60_000);

  test('an unknown option is refused with the usage', async () => {
    const result = await runCli('migrate', ['--dryrun'], { DATABASE_PATH: join(tmp, 'none.db') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('Usage: npm run migrate [-- --dry-run]');
  }, 60_000);
});

/** A database holding two hooks whose signing secrets are sealed with `secret`. */
async function withSealedHooks(secret: string): Promise<{ env: Record<string, string>; path: string }> {
  const target = await freshDatabase();
  const db = await openDatabase(target.url ? { url: target.url } : { path: target.path });
  for (const id of ['hook_a', 'hook_b']) {
    await db.kysely
      .insertInto('hooks')
      .values({
        id,
        key_hash: 'k',
        target_url: 'https://example.com/x',
        events: '[]',
        device_ids: null,
        secret_cipher: box(secret).seal(`whsec_${id}`),
        status: 'active',
        status_reason: null,
        created_at: '2026-01-01T00:00:00.000000Z',
        identity: null,
        target_origin: null,
        disabled_at: null,
      })
      .execute();
  }
  await db.close();
  return target;
}

describe('npm run rotate-secret', () => {
  test('re-seals with CONNECTOR_SECRET what CONNECTOR_SECRET_PREVIOUS opens, once; a third secret is refused naming CONNECTOR_SECRET', async () => {
    const target = await withSealedHooks(oldSecret);
    const env = { ...target.env, CONNECTOR_SECRET: newSecret, CONNECTOR_SECRET_PREVIOUS: oldSecret };
    const dry = await runCli('rotate-secret', ['--dry-run'], env);
    expect(dry).toMatchObject({ code: 0, stdout: '2 stored secrets would be re-sealed with CONNECTOR_SECRET; 0 already are.\n' });
    const first = await runCli('rotate-secret', [], env);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('Re-sealed 2 stored secrets with CONNECTOR_SECRET; 0 already were.\n');
    expect(first.stdout).toContain('CONNECTOR_SECRET_PREVIOUS may now be removed');
    const second = await runCli('rotate-secret', [], { ...target.env, CONNECTOR_SECRET: newSecret });
    expect(second.stdout).toBe('Re-sealed 0 stored secrets with CONNECTOR_SECRET; 2 already were.\n');

    const stranger = await runCli('rotate-secret', [], { ...target.env, CONNECTOR_SECRET: strangerSecret });
    expect(stranger.code).toBe(1);
    expect(stranger.stderr).toMatch(/^CONNECTOR_SECRET does not open 2 stored secrets \(hooks\.secret_cipher: 2\): [^\n]+\n$/);
  }, 120_000);

  test('CONNECTOR_SECRET_PREVIOUS without CONNECTOR_SECRET is a configuration error naming CONNECTOR_SECRET', async () => {
    const result = await runCli('rotate-secret', [], { DATABASE_PATH: join(tmp, 'never.db'), CONNECTOR_SECRET_PREVIOUS: oldSecret });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'Invalid configuration: CONNECTOR_SECRET must be set when CONNECTOR_SECRET_PREVIOUS is: it is the new secret that stored secrets are re-sealed with\n',
    );
  }, 60_000);
});

describe('the start with stored secrets', () => {
  test('stored secrets that neither secret opens stop the start with one line naming CONNECTOR_SECRET; with the previous secret beside it, it starts', async () => {
    const target = await withSealedHooks(oldSecret);
    const base = { ...target.env, PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'json', LOG_LEVEL: 'info' };
    const refused = await new Child(mainJs, { env: { ...base, CONNECTOR_SECRET: newSecret }, timeoutMs: 60_000 }).exited;
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^CONNECTOR_SECRET does not open 2 stored secrets \(hooks\.secret_cipher: 2\): [^\n]+\n$/);

    const server = new Child(mainJs, { env: { ...base, CONNECTOR_SECRET: newSecret, CONNECTOR_SECRET_PREVIOUS: oldSecret }, timeoutMs: 60_000 });
    await server.waitFor(/"msg":"listening"/, 40_000);
    expect(server.stdout).toContain('run npm run rotate-secret');
    expect((await server.stop()).code).toBe(0);
  }, 120_000);
});

describe('npm run backup', () => {
  const demoKey = 'sk_demo_harbor_ana_all_0123456789';

  async function serve(path: string): Promise<{ child: Child; base: string }> {
    const child = new Child(mainJs, {
      env: {
        DATABASE_PATH: path,
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        CONNECTOR_SECRET: newSecret,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      },
      timeoutMs: 120_000,
    });
    const [, port] = await child.waitFor(/"port":(\d+)[^\n]*"msg":"listening"/, 40_000);
    return { child, base: `http://127.0.0.1:${port}` };
  }

  async function hookIds(base: string): Promise<Set<string>> {
    const res = await fetch(`${base}/v1/hooks?limit=500`, { headers: { 'X-API-Key': demoKey } });
    expect(res.status).toBe(200);
    expect(res.headers.get('link')).toBeNull();
    return new Set(((await res.json()) as Array<{ id: string }>).map((h) => h.id));
  }

  (testEngine === 'sqlite' ? test : test.skip)(
    'copies the database while the server writes; the restored copy has every write acknowledged before the backup began',
    async () => {
      const dir = mkdtempSync(join(tmp, 'backup-'));
      const live = join(dir, 'live', 'connector.db');
      const copy = join(dir, 'connector-backup.db');
      const { child, base } = await serve(live);
      // A client that keeps subscribing hooks (each a committed write) until told to stop.
      const acked: Array<{ id: string }> = [];
      let writing = true;
      const writer = (async () => {
        for (let i = 0; writing; i += 1) {
          const res = await fetch(`${base}/v1/hooks`, {
            method: 'POST',
            headers: { 'X-API-Key': demoKey, 'Content-Type': 'application/json' },
            body: JSON.stringify({ target_url: `http://127.0.0.1:9/hook/${i}` }),
          });
          expect(res.status).toBe(201);
          acked.push({ id: ((await res.json()) as { id: string }).id });
        }
      })();
      const waitForAcks = async (count: number) => {
        while (acked.length < count) await new Promise((resolve) => setTimeout(resolve, 20));
      };
      await waitForAcks(30);
      // Everything acknowledged so far came before the backup (by order, not by the clock: an
      // acknowledgement in the same millisecond as the start was still made before it).
      const beforeBackup = acked.map((a) => a.id);
      const backup = await runCli('backup', [copy], { DATABASE_PATH: live });
      const countAtEnd = acked.length;
      await waitForAcks(countAtEnd + 21);
      writing = false;
      await writer;
      expect((await child.stop()).code).toBe(0);
      expect(backup.code).toBe(0);
      expect(backup.stdout).toMatch(new RegExp(`^Backed up ${live} to ${copy}: \\d+ pages \\([\\d.]+ MB\\), schema version ${latest}, quick_check ok\\.\\n$`));

      // Restore: the copy becomes the database file of a stopped server, then the server starts on it.
      const restored = join(dir, 'restored', 'connector.db');
      mkdirSync(join(dir, 'restored'));
      copyFileSync(copy, restored);
      const again = await serve(restored);
      try {
        const ids = await hookIds(again.base);
        expect(beforeBackup.length).toBeGreaterThanOrEqual(30);
        expect(beforeBackup.filter((id) => !ids.has(id))).toEqual([]);
        // A snapshot: what was written after the backup ended is not in it. The writer sends one
        // request at a time, so every write after the one in flight at the end was sent after it.
        const afterBackup = acked.slice(countAtEnd + 1).map((a) => a.id);
        expect(afterBackup.length).toBeGreaterThanOrEqual(20);
        expect(afterBackup.filter((id) => ids.has(id))).toEqual([]);
      } finally {
        await again.child.stop();
      }
      // A backup never overwrites.
      const refused = await runCli('backup', [copy], { DATABASE_PATH: live });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain('already exists');
    },
    180_000,
  );

  (testEngine === 'postgres' ? test : test.skip)(
    'on PostgreSQL the documented pg_dump and pg_restore round trip keeps the schema and the sealed secrets',
    async () => {
      const version = spawnSync('pg_dump', ['--version'], { encoding: 'utf8' });
      if (version.error) {
        console.warn('pg_dump not found on PATH: skipping the pg_dump/pg_restore round trip of docs/deploy.md (apt-get install postgresql-client)');
        return;
      }
      const target = await withSealedHooks(newSecret);
      const dump = join(tmp, 'connector.dump');
      const dumped = spawnSync('pg_dump', ['--format=custom', `--file=${dump}`, target.env.DATABASE_URL!], { encoding: 'utf8', timeout: 60_000 });
      if (/server version mismatch/.test(dumped.stderr)) {
        console.warn(`skipping the pg_dump/pg_restore round trip: ${dumped.stderr.trim()}`);
        return;
      }
      expect({ status: dumped.status, stderr: dumped.stderr }).toEqual({ status: 0, stderr: '' });
      const restored = await createTestDatabase();
      databases.push(restored);
      const restore = spawnSync('pg_restore', ['--no-owner', `--dbname=${restored.url}`, dump], { encoding: 'utf8', timeout: 60_000 });
      expect({ status: restore.status, stderr: restore.stderr }).toEqual({ status: 0, stderr: '' });
      const env = { DATABASE_URL: restored.url, CONNECTOR_SECRET: newSecret };
      expect((await runCli('migrate', ['--dry-run'], env)).stdout).toMatch(/^No pending migrations/);
      expect((await runCli('rotate-secret', ['--dry-run'], env)).stdout).toBe('0 stored secrets would be re-sealed with CONNECTOR_SECRET; 2 already are.\n');
    },
    120_000,
  );

  (testEngine === 'postgres' ? test : test.skip)(
    'on PostgreSQL it says to use pg_dump and writes nothing',
    async () => {
      const target = await freshDatabase();
      const file = join(tmp, 'pg-backup.dump');
      const result = await runCli('backup', [file], target.env);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('DATABASE_URL is set');
      expect(result.stderr).toContain(`pg_dump --format=custom --file=${file} "$DATABASE_URL"`);
      expect(existsSync(file)).toBe(false);
    },
    60_000,
  );
});

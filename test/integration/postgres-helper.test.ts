import { describe, expect, test } from '@jest/globals';
import { existsSync } from 'node:fs';
import pg from 'pg';
import { createTestDatabase, postgresAvailable, withServer } from '../helpers/postgres.js';

interface EmbeddedTestServer {
  server: { pid: number; port: number };
  dir: string;
}
type Hook = { default: () => Promise<void>; handleKey?: string };
// Plain .mjs files (jest loads them without a build); imported by URL, so untyped.
const loadHook = (file: string) => import(new URL(`../${file}`, import.meta.url).href) as Promise<Hook>;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const databaseExists = (name: string) =>
  withServer(async (client) => (await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1);

describe('createTestDatabase (test/helpers/postgres.ts)', () => {
  test('a server is configured for every run: TEST_DATABASE_URL or the embedded one', () => {
    expect(postgresAvailable()).toBe(true);
    const embeddedPid = process.env.TEST_EMBEDDED_POSTGRES_PID;
    if (embeddedPid) expect(alive(Number(embeddedPid))).toBe(true);
  });

  test('creates a fresh, uniquely named database one can use, and drop() removes it with a session still open', async () => {
    const [a, b] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    try {
      expect(a.name).toMatch(new RegExp(`^t_${process.pid}_[0-9a-f]{10}$`));
      expect(a.name).not.toBe(b.name);
      expect(new URL(a.url).pathname).toBe(`/${a.name}`);

      const client = new pg.Client({ connectionString: a.url });
      client.on('error', () => undefined); // the forced drop terminates this session
      await client.connect();
      expect((await client.query('SELECT current_database() AS db')).rows[0].db).toBe(a.name);
      await client.query('CREATE TABLE probe (id int PRIMARY KEY)');
      await client.query('INSERT INTO probe VALUES (1), (2)');
      expect((await client.query('SELECT count(*)::int AS n FROM probe')).rows[0].n).toBe(2);

      await a.drop();
      await a.drop(); // idempotent
      expect(await databaseExists(a.name)).toBe(false);
      await expect(client.query('SELECT 1')).rejects.toThrow();
      await client.end().catch(() => undefined);
      expect(await databaseExists(b.name)).toBe(true);
    } finally {
      await Promise.all([a.drop(), b.drop()]);
    }
  });
});

describe('embedded PostgreSQL for runs without TEST_DATABASE_URL (test/global-setup.mjs, global-teardown.mjs)', () => {
  test('globalSetup starts a server and publishes its URL; globalTeardown stops it (pid gone) and removes its data', async () => {
    const setup = await loadHook('global-setup.mjs');
    const { default: globalSetup } = setup;
    const { default: globalTeardown } = await loadHook('global-teardown.mjs');
    const handleKey = setup.handleKey!;
    const saved = {
      url: process.env.TEST_DATABASE_URL,
      pid: process.env.TEST_EMBEDDED_POSTGRES_PID,
      handle: (globalThis as Record<string, unknown>)[handleKey],
    };
    delete process.env.TEST_DATABASE_URL;
    delete (globalThis as Record<string, unknown>)[handleKey];
    try {
      await globalSetup();
      const handle = (globalThis as Record<string, unknown>)[handleKey] as EmbeddedTestServer;
      const pid = Number(process.env.TEST_EMBEDDED_POSTGRES_PID);
      expect(pid).toBe(handle.server.pid);
      expect(alive(pid)).toBe(true);
      const db = await createTestDatabase();
      expect(new URL(db.url).port).toBe(String(handle.server.port));
      const client = new pg.Client({ connectionString: db.url });
      await client.connect();
      expect((await client.query('SELECT 41 + 1 AS n')).rows[0].n).toBe(42);
      await client.end();
      await db.drop();

      await globalTeardown();
      expect(alive(pid)).toBe(false);
      expect(existsSync(handle.dir)).toBe(false);
      expect(process.env.TEST_DATABASE_URL).toBeUndefined();
    } finally {
      if (saved.url !== undefined) process.env.TEST_DATABASE_URL = saved.url;
      if (saved.pid !== undefined) process.env.TEST_EMBEDDED_POSTGRES_PID = saved.pid;
      if (saved.handle !== undefined) (globalThis as Record<string, unknown>)[handleKey] = saved.handle;
    }
  }, 60_000);
});

import { afterAll, describe, expect, test } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { testEngine } from '../helpers/engine.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';

/**
 * DATABASE_TIMEOUT_MS bounds every wait on the database (docs/configuration.md): a locked
 * table, a pool with no free connection, another process holding SQLite's write lock. Past the
 * bound a request answers 503 with Retry-After, and /readyz says not ready, within its own
 * timeout; nothing hangs until the client gives up.
 */
const timeoutMs = 1_000;
const apps: TestApp[] = [];
const dirs: string[] = [];
const onPostgres = testEngine === 'postgres' ? test : test.skip;
const onSqlite = testEngine === 'sqlite' ? test : test.skip;

afterAll(async () => {
  for (const t of apps) await t.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function app(env: Record<string, string> = {}, databasePath?: string): Promise<TestApp> {
  const t = await buildTestApp({
    dataset: catalog(),
    clock: new ManualClock(Date.now()),
    databasePath,
    env: { DATABASE_TIMEOUT_MS: String(timeoutMs), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...env },
  });
  apps.push(t);
  return t;
}

const auth = { 'X-API-Key': keys.ana };

/** The answer and how long it took. */
async function timed(send: () => Promise<request.Response>): Promise<{ res: request.Response; ms: number }> {
  const started = Date.now();
  const res = await send();
  return { res, ms: Date.now() - started };
}

function expectBounded({ res, ms }: { res: request.Response; ms: number }, bound: number): void {
  expect(res.status).toBe(503);
  expect(res.body).toEqual({ message: 'Database unavailable' });
  expect(res.headers['retry-after']).toMatch(/^\d+$/);
  expect(ms).toBeLessThan(bound + 1_500);
}

describe('PostgreSQL', () => {
  onPostgres('a table locked by another connection: the request answers 503 within DATABASE_TIMEOUT_MS, /readyz too', async () => {
    const t = await app();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let locked!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const holder = t.db.transaction(async (trx) => {
      await sql`LOCK TABLE hooks, readiness_probe IN ACCESS EXCLUSIVE MODE`.execute(trx);
      locked();
      await held;
    });
    await isLocked;
    try {
      expectBounded(await timed(() => request(t.app).get('/v1/hooks').set(auth)), timeoutMs);
      const ready = await timed(() => request(t.app).get('/readyz'));
      expect(ready.res.status).toBe(503);
      expect(ready.res.body.checks.database).not.toBe('ok');
      expect(ready.ms).toBeLessThan(2_000 + 1_000);
    } finally {
      release();
      await holder;
    }
    await request(t.app).get('/v1/hooks').set(auth).expect(200);
    await request(t.app).get('/readyz').expect(200);
  });

  onPostgres('every pooled connection busy: the request answers 503 within DATABASE_TIMEOUT_MS', async () => {
    const t = await app({ DATABASE_POOL_SIZE: '2' });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    let allStarted!: () => void;
    const busy = new Promise<void>((resolve) => (allStarted = resolve));
    const holders = [1, 2].map(() =>
      t.db.transaction(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        if (++started === 2) allStarted();
        await held;
      }),
    );
    await busy;
    try {
      expectBounded(await timed(() => request(t.app).get('/v1/hooks').set(auth)), timeoutMs);
    } finally {
      release();
      await Promise.all(holders);
    }
    await request(t.app).get('/v1/hooks').set(auth).expect(200);
  });
});

describe('SQLite', () => {
  onSqlite('another process holding the write lock: a write answers 503 after DATABASE_TIMEOUT_MS; the event loop is never blocked', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bounded-waits-'));
    dirs.push(dir);
    const file = join(dir, 'connector.db');
    // A longer wait here, so the requests below have seconds to be answered in it.
    const lockWaitMs = 5 * timeoutMs;
    const t = await app({ DATABASE_TIMEOUT_MS: String(lockWaitMs) }, file);
    const other = new BetterSqlite3(file);
    other.exec('BEGIN IMMEDIATE');
    try {
      let writeAnswered = false;
      const write = timed(() => request(t.app).post('/v1/hooks').set(auth).send({ target_url: 'http://127.0.0.1:9/hook' })).finally(
        () => (writeAnswered = true),
      );
      // Meanwhile what needs no database is answered, while the write still waits: the wait for
      // the lock is asynchronous. SQLite's own busy wait would block the whole process, and the
      // write's 503 would come before any of these. (Order, not durations.)
      for (let i = 0; i < 5; i++) {
        const health = await request(t.app).get('/healthz');
        expect(health.status).toBe(200);
        expect(writeAnswered).toBe(false);
      }
      expectBounded(await write, lockWaitMs);
      expect((await write).ms).toBeGreaterThanOrEqual(lockWaitMs - 100);
      const ready = await request(t.app).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.checks.database).not.toBe('ok');
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
    await request(t.app).post('/v1/hooks').set(auth).send({ target_url: 'http://127.0.0.1:9/hook' }).expect(201);
    await request(t.app).get('/readyz').expect(200);
  });
});

describe('both engines', () => {
  test("a request's baseline poll that outlasts DATABASE_TIMEOUT_MS does not spend the request's deadline: the first call answers 200", async () => {
    // Every page of the device listing answers after 1.5 s, so the baseline takes longer than the 1 s bound.
    // The poll bounds its own waits; the request's own waits (enrolment before it, the event log's
    // read after it) still share one deadline, which the poll's time does not count against.
    const upstream = await new FakeUpstream(catalog()).start();
    try {
      const t = await buildTestApp({
        clock: new ManualClock(Date.now()),
        env: { DATABASE_TIMEOUT_MS: String(timeoutMs), DEVICE_API_URL: upstream.baseUrl, UPSTREAM_TIMEOUT_MS: '10000', CONNECTOR_SECRET: 'a1'.repeat(32) },
      });
      apps.push(t);
      await request(t.app).get('/v1/me').set(auth).expect(200); // the key checked and remembered
      upstream.failAlways({ pathPrefix: '/devices', delayMs: 1_500 });
      const res = await request(t.app).get('/v1/triggers/device-status').set(auth);
      expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: [] });
      expect(Number(await t.value('SELECT count(*) AS n FROM watches WHERE baseline_at IS NOT NULL'))).toBe(1);
    } finally {
      await upstream.stop();
    }
  });
});

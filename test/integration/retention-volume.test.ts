import { afterEach, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { postgresUrl, testEngine } from '../helpers/engine.js';
import { longestPauseDuring } from '../helpers/event-loop.js';
import { walSizeLimitBytes } from '../../src/db/sqlite-checkpointer.js';
import { withPgClient } from '../../src/db/pg-client.js';

/**
 * The retention sweep over a big backlog (docs/webhooks.md, "Retention"): 100,000 events past
 * the retention, 20,000 of them with a delivered delivery and its attempt. It deletes them in
 * short slices with the event loop free in between (SQLite runs every statement on it), so
 * /healthz keeps answering; no statement comes near DATABASE_TIMEOUT_MS (PostgreSQL: one
 * statement for everything ran past it, so the sweep never finished); one log line says what
 * went; SQLite's write-ahead log is back within its limit afterwards. What the retention keeps
 * is kept.
 */
const day = 86_400_000;
const oldEvents = 100_000;
const delivered = 20_000;
const pending = 50;
const recentEvents = 1_000;

let t: TestApp | undefined;
let server: Server | undefined;
let dir: string | undefined;
afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  t = server = dir = undefined;
});

/**
 * Runs the statements in one transaction, on PostgreSQL on a connection of its own with no
 * time limit: building the volume is not what is measured (the app's own connections give up
 * after DATABASE_TIMEOUT_MS).
 */
async function bulk(app: TestApp, statements: string[]): Promise<void> {
  if (testEngine === 'sqlite') {
    await app.db.transaction(async (trx) => {
      for (const text of statements) await sql.raw(text).execute(trx);
    });
    return;
  }
  const schema = String(await app.value('SELECT current_schema()'));
  await withPgClient(postgresUrl(), async (client) => {
    await client.query(`SET search_path TO ${schema}`);
    await client.query('BEGIN');
    for (const text of statements) await client.query(text);
    await client.query('COMMIT');
  });
}

/** The backlog, written straight into the tables. */
async function backlog(app: TestApp): Promise<void> {
  const now = app.clock.now();
  const old = now - 8 * day;
  const numbers = (n: number) =>
    testEngine === 'postgres'
      ? `generate_series(1, ${n}) AS s(i)`
      : `(WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${n}) SELECT i FROM s) AS s`;
  const text = (n: number) => (testEngine === 'postgres' ? `repeat('x', ${n})` : `substr(hex(zeroblob(${n})), 1, ${n})`);
  const oldTime = "'2026-05-24T12:00:00.000000Z'";
  const hook = (id: string, status: string, disabledAt: number | null) =>
    `INSERT INTO hooks (id, key_hash, target_url, events, secret_cipher, status, created_at, disabled_at) VALUES ('${id}', 'k', 'https://example.com/h', '[]', 'x', '${status}', ${oldTime}, ${disabledAt ?? 'NULL'})`;
  await bulk(app, [
    hook('h_live', 'active', null),
    hook('h_gone', 'disabled', old),
    `INSERT INTO events (id, key_hash, type, device_id, occurred_at, payload, created_at)
       SELECT 'old_' || i, 'k', 'device.offline', 'd' || (i % 1000), ${oldTime}, '{"p":"' || ${text(300)} || '"}', ${old - oldEvents} + i FROM ${numbers(oldEvents)}`,
    `INSERT INTO events (id, key_hash, type, device_id, occurred_at, payload, created_at)
       SELECT 'new_' || i, 'k', 'device.online', 'd' || i, ${oldTime}, '{}', ${now - day} FROM ${numbers(recentEvents)}`,
    `INSERT INTO deliveries (hook_id, event_seq, webhook_id, status, attempts, next_attempt_at, created_at)
       SELECT 'h_live', seq, 'msg_' || seq, 'delivered', 1, 0, ${old} FROM events WHERE id LIKE 'old_%' ORDER BY seq LIMIT ${delivered}`,
    `INSERT INTO delivery_attempts (delivery_id, hook_id, event_id, webhook_id, attempt, status_code, duration_ms, attempted_at, outcome)
       SELECT d.id, d.hook_id, 'e', d.webhook_id, 1, 200, 5, ${oldTime}, 'delivered' FROM deliveries d`,
    `INSERT INTO deliveries (hook_id, event_seq, webhook_id, status, attempts, next_attempt_at, created_at)
       SELECT 'h_live', seq, 'msg_' || seq, 'pending', 0, ${now + day}, ${old} FROM events WHERE id LIKE 'old_%' ORDER BY seq DESC LIMIT ${pending}`,
  ]);
}

/** GET /healthz one after the other until `done`, each answer's status. */
async function probeHealth(done: () => boolean): Promise<number[]> {
  const statuses: number[] = [];
  while (!done()) statuses.push((await request(server!).get('/healthz')).status);
  return statuses;
}

const count = async (table: string) => Number(await t!.value(`SELECT count(*) FROM ${table}`));

test('a sweep of 100,000 events in slices: /healthz answers throughout, one log line, the log file cut back, what is kept stays', async () => {
  dir = mkdtempSync(join(tmpdir(), 'retention-volume-'));
  const logLines: string[] = [];
  t = await buildTestApp({
    clock: new ManualClock(Date.parse('2026-06-01T12:00:00Z')),
    databasePath: join(dir, 'connector.db'),
    logLines,
    // PostgreSQL: a statement bound of one second, which one statement for all the events exceeded.
    env: { LOG_LEVEL: 'info', ...(testEngine === 'postgres' ? { DATABASE_TIMEOUT_MS: '1000' } : {}) },
  });
  await backlog(t);
  server = createServer(t.app).listen(0, '127.0.0.1');
  let finished = false;
  const health = probeHealth(() => finished);
  const { longestMs, turns, tookMs, result: report } = await longestPauseDuring(() => t!.services.retention.runOnce().finally(() => (finished = true)));
  const statuses = await health;

  expect(report).toMatchObject({ expired: pending, events: oldEvents - pending, deliveries: delivered, attempts: delivered, hooks: 1, stopped: false });
  expect(await count('events')).toBe(pending + recentEvents);
  expect(await count('deliveries')).toBe(pending);
  expect(Number(await t.value("SELECT count(*) FROM deliveries WHERE status = 'dead'"))).toBe(pending);
  expect(await count('delivery_attempts')).toBe(pending);
  expect(await t.value('SELECT id FROM hooks')).toBe('h_live');

  // The event loop turned between slices (hundreds of them), never stood still for a large
  // part of the sweep, and /healthz was answered all along. (One statement for all the events
  // was most of the sweep: a single pause of seconds, a turn or two, /healthz unanswered meanwhile.)
  expect(statuses.length).toBeGreaterThanOrEqual(5);
  expect(statuses.every((s) => s === 200)).toBe(true);
  if (testEngine === 'sqlite') {
    expect(turns).toBeGreaterThan(100);
    expect(longestMs).toBeLessThan(Math.max(500, tookMs / 10));
  }

  const line = logLines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'retention sweep');
  expect(line).toMatchObject({
    level: 30,
    expired: pending,
    events: oldEvents - pending,
    deliveries: delivered,
    attempts: delivered,
    hooks: 1,
    stopped: false,
  });
  expect(line!.durationMs).toEqual(expect.any(Number));

  if (testEngine === 'sqlite') expect(statSync(join(dir, 'connector.db-wal')).size).toBeLessThanOrEqual(walSizeLimitBytes);
}, 300_000);

test('a shutdown stops a sweep between two slices; the next sweep finishes it', async () => {
  t = await buildTestApp({ clock: new ManualClock(Date.parse('2026-06-01T12:00:00Z')) });
  await backlog(t);
  const sweep = t.services.retention.runOnce();
  // Stopped as soon as the first slices have run.
  while ((await count('events')) === oldEvents + recentEvents) await new Promise((r) => setTimeout(r, 5));
  await t.services.retention.stop();
  const first = await sweep;
  expect(first.stopped).toBe(true);
  expect(first.events).toBeLessThan(oldEvents - pending);
  expect(await count('events')).toBeGreaterThan(pending + recentEvents);
  t.services.retention.start();
  const second = await t.services.retention.runOnce();
  expect(second).toMatchObject({ stopped: false, events: oldEvents - pending - first.events });
  expect(await count('events')).toBe(pending + recentEvents);
  await t.services.retention.stop();
}, 300_000);

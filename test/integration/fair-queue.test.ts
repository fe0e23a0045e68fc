import { afterEach, describe, expect, test } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { hashKey } from '../../src/auth/keys.js';
import type { DeviceEvent } from '../../src/catalog/event.js';
import { openDatabase } from '../../src/db/database.js';
import { renderMigration } from '../../src/db/migrations.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { queueDeliveries } from '../../src/webhooks/fan-out.js';
import { queueOfflineEvents } from '../helpers/queued-events.js';
import { testEngine } from '../helpers/engine.js';
import { turnsDuring } from '../helpers/event-loop.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * Fairness (docs/webhooks.md): within one target origin, due deliveries are claimed across
 * hooks, so one hook's backlog delays only that hook.
 */
let t: TestApp;
afterEach(async () => {
  const app = t;
  t = undefined as unknown as TestApp;
  await app?.close();
});

const keyHash = hashKey(keys.ana);

/** `count` events of one device, logged now and fanned out to the key's hooks. */
async function queue(device: string, count: number, tag: string, key = keys.ana): Promise<void> {
  const ids = Array.from({ length: count }, (_, i) => `evt_${tag}_${i}`);
  await queueOfflineEvents(t.db, hashKey(key), device, ids, t.clock.now());
}

async function hook(path: string, device: string, key = keys.ana): Promise<string> {
  const res = await request(t.app)
    .post('/v1/hooks')
    .set('X-API-Key', key)
    .send({ target_url: `http://127.0.0.1:9/${path}`, device_ids: [device] })
    .expect(201);
  return res.body.id as string;
}

const claim = (limit: number) => t.services.deliveryQueue.claim({ limit, leaseMs: 60_000 });

type Due = Awaited<ReturnType<typeof claim>>[number];
/** Records claimed deliveries as delivered (the receiver answered 2xx). */
async function answer(due: Due[]): Promise<void> {
  const now = t.clock.now();
  await t.services.deliveryQueue.record(
    due.map((d) => ({
      delivery: d,
      attempt: d.attempts + 1,
      outcome: 'delivered' as const,
      statusCode: 204,
      error: null,
      durationMs: 1,
      attemptedAt: now,
      nextAttemptAt: null,
    })),
  );
}

test("another hook's delivery on the same origin is claimed before one hook's backlog of 500", async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const busy = await hook('busy', 'a4:83:e7:1f:2b:01');
  const quiet = await hook('quiet', 'a4:83:e7:1f:2b:02');
  await queue('a4:83:e7:1f:2b:01', 500, 'busy');
  t.clock.advance(1_000);
  await queue('a4:83:e7:1f:2b:02', 1, 'quiet');
  t.clock.advance(1);

  const first = await claim(8);
  expect(first).toHaveLength(8);
  expect(first.filter((d) => d.hook_id === quiet)).toHaveLength(1);
  expect(first.filter((d) => d.hook_id === busy)).toHaveLength(7);
});

/**
 * Hook `busy` queues 500 deliveries and its receiver is slow: five minutes in, 16 were
 * delivered, so the backlog's virtual time lags the wall clock by almost five minutes. Then
 * `quiet` (same origin, `key`) gets one.
 */
async function laggingBacklog(key: string, device: string): Promise<{ busy: string; quiet: string }> {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const busy = await hook('busy', 'a4:83:e7:1f:2b:01');
  const quiet = await hook('quiet', device, key);
  await queue('a4:83:e7:1f:2b:01', 500, 'busy');
  t.clock.advance(1);
  await answer(await claim(8));
  t.clock.advance(300_000);
  await answer(await claim(8));
  await queue(device, 1, 'quiet', key);
  t.clock.advance(1);
  return { busy, quiet };
}

describe.each([
  ['of the same key', keys.ana, 'a4:83:e7:1f:2b:02'],
  ['of another key', keys.zoe, 'b0:00:00:00:00:01'],
])('a backlog that drains slower than one delivery a second of wall clock', (which, key, device) => {
  test(`another hook ${which} on the origin: its delivery is in the next claim, after at most one of the backlog`, async () => {
    const { busy, quiet } = await laggingBacklog(key, device);
    const first = await claim(4);
    expect(first.map((d) => d.hook_id)).toEqual([busy, quiet, busy, busy]);
  });

  test(`another hook ${which} on the origin: its retry comes back after its delay and at most a few of the backlog`, async () => {
    const { busy, quiet } = await laggingBacklog(key, device);
    // A third hook there, whose receiver answers 410 in the same batch (on PostgreSQL such a
    // batch is written by the engine-neutral path).
    const gone = await hook('gone', 'a4:83:e7:1f:2b:03');
    await queue('a4:83:e7:1f:2b:03', 1, 'gone');
    const first = await claim(4);
    expect(first.map((d) => d.hook_id).sort()).toEqual([busy, busy, gone, quiet].sort());
    const now = t.clock.now();
    const record = (d: Due, outcome: 'delivered' | 'retrying' | 'disabled', statusCode: number) => ({
      delivery: d,
      attempt: 1,
      outcome,
      statusCode,
      error: null,
      durationMs: 1,
      attemptedAt: now,
      nextAttemptAt: outcome === 'retrying' ? now + 5_000 : null,
    });
    await t.services.deliveryQueue.record(
      first.map((d) => (d.hook_id === quiet ? record(d, 'retrying', 500) : d.hook_id === gone ? record(d, 'disabled', 410) : record(d, 'delivered', 204))),
    );
    // It comes back 5 s of the origin's virtual time after the head of the backlog, not 5 s
    // after the wall clock (that is, behind ~290 of the backlog).
    t.clock.advance(4_999);
    expect((await claim(8)).map((d) => d.hook_id)).not.toContain(quiet);
    t.clock.advance(1);
    const again = await claim(8);
    expect(again.map((d) => d.hook_id)).toContain(quiet);
    expect(again.find((d) => d.hook_id === quiet)?.attempts).toBe(1);
  });
});

test('a backlog that drained does not push its hook back: its next delivery is first again', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const busy = await hook('busy', 'a4:83:e7:1f:2b:01');
  const quiet = await hook('quiet', 'a4:83:e7:1f:2b:02');
  await queue('a4:83:e7:1f:2b:01', 50, 'old');
  // The backlog is delivered.
  await t.db.kysely.updateTable('deliveries').set({ status: 'delivered' }).where('hook_id', '=', busy).execute();
  t.clock.advance(1_000);
  await queue('a4:83:e7:1f:2b:01', 1, 'new');
  t.clock.advance(1_000);
  await queue('a4:83:e7:1f:2b:02', 1, 'quiet');
  t.clock.advance(1);
  const order = (await claim(2)).map((d) => d.hook_id);
  expect(order).toEqual([busy, quiet]);
});

test('nothing due: the claim returns nothing, even with a queue of retries waiting', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  await hook('busy', 'a4:83:e7:1f:2b:01');
  await queue('a4:83:e7:1f:2b:01', 20, 'later');
  await t.db.kysely
    .updateTable('deliveries')
    .set({ next_attempt_at: t.clock.now() + 60_000 })
    .execute();
  expect(await claim(8)).toEqual([]);
  t.clock.advance(60_000);
  expect(await claim(8)).toHaveLength(8);
});

test('rooms: at most the room left per origin this replica holds, `fresh` for an origin it does not; an origin with no room is skipped', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const held = await hook('held', 'a4:83:e7:1f:2b:01');
  const res = await request(t.app)
    .post('/v1/hooks')
    .set('X-API-Key', keys.ana)
    .send({ target_url: 'http://127.0.0.1:10/other', device_ids: ['a4:83:e7:1f:2b:02'] })
    .expect(201);
  const other = res.body.id as string;
  await queue('a4:83:e7:1f:2b:01', 10, 'held');
  await queue('a4:83:e7:1f:2b:02', 10, 'other');
  t.clock.advance(1);
  const byHook = (due: Array<{ hook_id: string }>) => [held, other].map((id) => due.filter((d) => d.hook_id === id).length);

  const full = await t.services.deliveryQueue.claimRound({ limit: 20, leaseMs: 60_000, rooms: new Map([['http://127.0.0.1:9', 0]]), fresh: 3 });
  expect(byHook(full.due)).toEqual([0, 3]);
  expect(full.seen).toBe(10);

  const some = await t.services.deliveryQueue.claimRound({ limit: 20, leaseMs: 60_000, rooms: new Map([['http://127.0.0.1:9', 4]]), fresh: 2 });
  expect(byHook(some.due)).toEqual([4, 2]);
  expect(some.due.every((d) => d.leased_until === t.clock.now() + 60_000)).toBe(true);
});

test("records ride with the claim, and a hook's deliveries page newest first however many were recorded", async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const busy = await hook('busy', 'a4:83:e7:1f:2b:01');
  await queue('a4:83:e7:1f:2b:01', 450, 'many');
  t.clock.advance(1);
  let records: Parameters<typeof t.services.deliveryQueue.claimRound>[0]['records'] = [];
  let claimed = 0;
  for (;;) {
    const round = await t.services.deliveryQueue.claimRound({ limit: 50, leaseMs: 60_000, records });
    claimed += round.due.length;
    records = round.due.map((d) => ({
      delivery: d,
      attempt: 1,
      outcome: 'delivered' as const,
      statusCode: 204,
      error: null,
      durationMs: 1,
      attemptedAt: t.clock.now(),
      nextAttemptAt: null,
    }));
    if (round.due.length === 0) break;
  }
  expect(claimed).toBe(450);
  expect(await t.value("SELECT count(*) FROM deliveries WHERE status = 'delivered'")).toBe(450);
  // Every attempt is kept while its delivery is (a delivery's detail shows them all).
  expect(Number(await t.value('SELECT count(*) FROM delivery_attempts'))).toBe(450);
  const listed = await request(t.app).get(`/v1/hooks/${busy}/deliveries`).set('X-API-Key', keys.ana).expect(200);
  expect(listed.body).toHaveLength(100);
  expect(listed.headers['x-total-count']).toBe('450');
  expect(listed.body[0].event_id).toBe('evt_many_449');
});

const onSqlite = testEngine === 'sqlite' ? test : test.skip;

// SQLite answers synchronously, so a turn of the event loop inside the fan-out's transaction is
// one it let through on purpose, holding the database's one writer meanwhile: between its
// slices of 500 rows, never before the first (a mass outage over 1,000 keys is 1,000 small
// fan-outs, each of which would hold the writer a whole turn for nothing).
onSqlite('a fan-out lets other work run between its slices of deliveries, and a small one holds the writer for no turn of the event loop', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const hookId = await hook('all', 'a4:83:e7:1f:2b:01');
  const small = await turnsDuring(() => queue('a4:83:e7:1f:2b:01', 10, 'small'));
  expect(small.turns).toBe(0);
  const big = await turnsDuring(() => queue('a4:83:e7:1f:2b:01', 1_200, 'big'));
  // Three slices of deliveries: a turn before the second and the third.
  expect(big.turns).toBeGreaterThanOrEqual(2);
  expect(Number(await t.value('SELECT count(*) FROM deliveries WHERE hook_id = ?', hookId))).toBe(1_210);
});

onSqlite("migration 11: the deliveries pending before it count for their origin's virtual time", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fair-origin-'));
  try {
    const file = join(dir, 'old.db');
    const raw = new BetterSqlite3(file);
    for (let i = 0; i < 10; i++) raw.exec(renderMigration(i, 'sqlite'));
    raw.pragma('user_version = 10');
    const now = Date.now();
    const hookRow = raw.prepare(
      "INSERT INTO hooks (id, key_hash, target_url, events, device_ids, secret_cipher, status, created_at, identity, target_origin, fair_cursor) VALUES (?, ?, ?, '[\"device.offline\"]', NULL, 'x', 'active', '2026-06-01T12:00:00.000000Z', ?, 'http://127.0.0.1:9', ?)",
    );
    hookRow.run('hook_busy', 'other', 'http://127.0.0.1:9/busy', 'busy', now);
    hookRow.run('hook_quiet', keyHash, 'http://127.0.0.1:9/quiet', 'quiet', 0);
    // The busy hook's backlog, 5 minutes behind the wall clock: one delivered, two pending.
    for (const [i, status] of ['delivered', 'pending', 'pending'].entries()) {
      raw
        .prepare(
          "INSERT INTO events (id, key_hash, type, device_id, occurred_at, payload, created_at) VALUES (?, 'other', 'device.offline', 'd', '2026-06-01T12:00:00.000000Z', '{}', ?)",
        )
        .run(`evt_${i}`, now);
      raw
        .prepare("INSERT INTO deliveries (hook_id, event_seq, webhook_id, status, next_attempt_at, created_at, fair_at) VALUES ('hook_busy', ?, ?, ?, ?, ?, ?)")
        .run(i + 1, `msg_${i}`, status, now, now, now - 300_000 + i * 1000);
    }
    raw.close();
    const db = await openDatabase({ path: file });
    try {
      const event = { id: 'evt_quiet', type: 'device.offline', device: { id: 'd' } } as unknown as DeviceEvent;
      await db.transaction(async (trx) => {
        const row = await trx
          .insertInto('events')
          .values({
            id: event.id,
            key_hash: keyHash,
            type: event.type,
            device_id: 'd',
            occurred_at: '2026-06-01T12:00:01.000000Z',
            payload: '{}',
            created_at: now,
          })
          .returning('seq')
          .executeTakeFirstOrThrow();
        await queueDeliveries(trx, keyHash, [event], new Map([[event.id, Number(row.seq)]]), now);
      });
      const quiet = await db.kysely.selectFrom('deliveries').select(['fair_at', 'target_origin']).where('hook_id', '=', 'hook_quiet').executeTakeFirstOrThrow();
      // At the head of the busy hook's pending backlog, not at now behind it.
      expect(Number(quiet.fair_at)).toBe(now - 299_000);
      expect(quiet.target_origin).toBe('http://127.0.0.1:9');
    } finally {
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

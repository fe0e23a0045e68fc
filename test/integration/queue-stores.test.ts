import { beforeEach, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { hashKey } from '../../src/auth/keys.js';
import type { Db } from '../../src/db/database.js';
import { byEngine } from '../../src/db/engine.js';
import { PostgresWatchQueue } from '../../src/triggers/postgres-watch-queue.js';
import { SqliteWatchQueue } from '../../src/triggers/sqlite-watch-queue.js';
import type { WatchQueue } from '../../src/triggers/watch-queue.js';
import type { DeliveryStore } from '../../src/webhooks/delivery-store.js';
import type { AttemptRecord, Due, Outcome } from '../../src/webhooks/delivery-types.js';
import { PostgresDeliveryStore } from '../../src/webhooks/postgres-delivery-store.js';
import { SqliteDeliveryStore } from '../../src/webhooks/sqlite-delivery-store.js';
import { sqlHelpers, type TestApp } from '../helpers/app.js';
import { queueOfflineEvents } from '../helpers/queued-events.js';
import { appWithSecondConnection } from '../helpers/two-connections.js';
import { keys } from '../fixtures/catalog.js';

/**
 * The one contract of each queue's engine stores (webhooks/delivery-store.ts,
 * triggers/watch-queue.ts): this suite runs on SQLite in the `sqlite` project and on PostgreSQL
 * in the `postgres` project, each time against that engine's implementation, picked as
 * services.ts picks it. A second connection pool on the same database (`other`) plays a second
 * replica.
 */

const deliveryStore = (db: Db) =>
  byEngine<DeliveryStore>(db.engine, { sqlite: () => new SqliteDeliveryStore(db), postgres: () => new PostgresDeliveryStore(db) });
const watchQueue = (db: Db) => byEngine<WatchQueue>(db.engine, { sqlite: () => new SqliteWatchQueue(db), postgres: () => new PostgresWatchQueue(db) });

const rig = appWithSecondConnection('queue-stores');
let t: TestApp;
let other: Db;
beforeEach(() => {
  ({ app: t, other } = rig);
});

const leaseMs = 60_000;
let eventCount = 0;

/** A hook of ana's on `origin` for one device. */
async function hook(device: string, origin = 'http://127.0.0.1:9'): Promise<string> {
  const res = await request(t.app)
    .post('/v1/hooks')
    .set('X-API-Key', keys.ana)
    .send({ target_url: `${origin}/${device}`, device_ids: [device] })
    .expect(201);
  return res.body.id as string;
}

/** `count` events of `device`, logged now and fanned out to its hooks, as a poll does. */
async function queue(device: string, count: number): Promise<void> {
  const ids = Array.from({ length: count }, () => `evt_${(eventCount += 1)}`);
  await queueOfflineEvents(t.db, hashKey(keys.ana), device, ids, t.clock.now());
}

/** A finished attempt of `d`. */
function attempt(d: Due, outcome: Outcome, nextAttemptAt: number | null = null, attemptNo = d.attempts + 1): AttemptRecord {
  const statusCode = { delivered: 204, retrying: 500, dead: 500, disabled: 410 }[outcome];
  return { delivery: d, attempt: attemptNo, outcome, statusCode, error: null, durationMs: 2, attemptedAt: t.clock.now(), nextAttemptAt };
}

const row = (id: number) =>
  t.one<{ status: string; attempts: number; leased_until: number; next_attempt_at: number }>(
    'SELECT status, attempts, leased_until, next_attempt_at FROM deliveries WHERE id = ?',
    id,
  );
const norm = (r: Awaited<ReturnType<typeof row>>) =>
  r && { ...r, attempts: Number(r.attempts), leased_until: Number(r.leased_until), next_attempt_at: Number(r.next_attempt_at) };
const ids = (due: Due[]) => due.map((d) => d.id);

describe('the delivery store', () => {
  test('claims due deliveries in fair order, at most `limit`, and the lease holds them until its end', async () => {
    await hook('a4:83:e7:1f:2b:01');
    await hook('a4:83:e7:1f:2b:02');
    await queue('a4:83:e7:1f:2b:01', 4);
    t.clock.advance(1_000);
    await queue('a4:83:e7:1f:2b:02', 2);
    const fairOrder = (await t.all<{ id: number }>('SELECT id FROM deliveries ORDER BY fair_at, id')).map((r) => Number(r.id));

    const store = deliveryStore(t.db);
    const now = t.clock.now();
    const queued = norm(await row(fairOrder[0]!));
    const round = await store.claimDue(now, { limit: 5, leaseMs });
    expect(ids(round.due)).toEqual(fairOrder.slice(0, 5));
    expect(round.seen).toBe(5);
    expect(round.due.every((d) => d.leased_until === now + leaseMs && d.attempts === 0 && d.target_origin === 'http://127.0.0.1:9')).toBe(true);
    // On PostgreSQL the lease is leased_until alone (no indexed column changes: a heap-only
    // update), the due time it was queued with stays; SQLite moves the due time to the lease's end.
    const due = t.db.engine === 'sqlite' ? now + leaseMs : queued!.next_attempt_at;
    expect(norm(await row(round.due[0]!.id))).toEqual({ ...queued, leased_until: now + leaseMs, next_attempt_at: due });
    expect(queued).toEqual({ status: 'pending', attempts: 0, leased_until: 0, next_attempt_at: now - 1_000 });
  });

  test('skips leased deliveries until their lease ends, then claims them again as they were', async () => {
    await hook('a4:83:e7:1f:2b:01');
    await queue('a4:83:e7:1f:2b:01', 3);
    const store = deliveryStore(t.db);
    const first = await store.claimDue(t.clock.now(), { limit: 2, leaseMs });
    t.clock.advance(10);
    const second = await store.claimDue(t.clock.now(), { limit: 10, leaseMs });
    expect(second.due).toHaveLength(1);
    expect(ids(first.due)).not.toContain(second.due[0]!.id);
    t.clock.advance(leaseMs - 11);
    expect((await store.claimDue(t.clock.now(), { limit: 10, leaseMs })).due).toEqual([]);
    t.clock.advance(1);
    const again = await store.claimDue(t.clock.now(), { limit: 10, leaseMs });
    expect(ids(again.due)).toEqual(ids(first.due));
    expect(again.due.map((d) => [d.webhook_id, d.attempts])).toEqual(first.due.map((d) => [d.webhook_id, 0]));
  });

  test("takes at most `rooms` of an origin it lists and `fresh` of another, and skips a disabled hook's queue", async () => {
    await hook('a4:83:e7:1f:2b:01', 'http://127.0.0.1:9');
    await hook('a4:83:e7:1f:2b:02', 'http://127.0.0.1:10');
    const held = await hook('a4:83:e7:1f:2b:03', 'http://127.0.0.1:11');
    for (const device of ['a4:83:e7:1f:2b:01', 'a4:83:e7:1f:2b:02', 'a4:83:e7:1f:2b:03']) await queue(device, 3);
    await request(t.app).patch(`/v1/hooks/${held}`).set('X-API-Key', keys.ana).send({ enabled: false }).expect(200);
    const store = deliveryStore(t.db);
    const full = await store.claimDue(t.clock.now(), { limit: 20, leaseMs, rooms: new Map([['http://127.0.0.1:9', 0]]), fresh: 2 });
    expect(full.due.map((d) => d.target_origin)).toEqual(['http://127.0.0.1:10', 'http://127.0.0.1:10']);
    const some = await store.claimDue(t.clock.now(), { limit: 20, leaseMs, rooms: new Map([['http://127.0.0.1:9', 1]]), fresh: 0 });
    expect(some.due.map((d) => d.target_origin)).toEqual(['http://127.0.0.1:9']);
  });

  test('two replicas claiming at once never lease the same delivery, and lose none', async () => {
    await hook('a4:83:e7:1f:2b:01');
    await hook('a4:83:e7:1f:2b:02', 'http://127.0.0.1:10');
    await queue('a4:83:e7:1f:2b:01', 30);
    await queue('a4:83:e7:1f:2b:02', 30);
    const stores = [deliveryStore(t.db), deliveryStore(other)];
    const now = t.clock.now();
    // Four claimers per replica, three rounds each, all at once.
    const claimed = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const got: number[] = [];
        for (let round = 0; round < 3; round += 1) got.push(...ids((await stores[i % 2]!.claimDue(now, { limit: 2, leaseMs })).due));
        return got;
      }),
    );
    const all = claimed.flat();
    expect(new Set(all).size).toBe(all.length);
    const rest = ids((await stores[0]!.claimDue(now, { limit: 100, leaseMs })).due);
    expect(rest.filter((id) => all.includes(id))).toEqual([]);
    expect(all.length + rest.length).toBe(60);
  });

  test('records a success, a retry and a dead end, each with its attempt logged; the retry is due at its time', async () => {
    await hook('a4:83:e7:1f:2b:01');
    await queue('a4:83:e7:1f:2b:01', 3);
    const store = deliveryStore(t.db);
    const [sent, retried, dead] = (await store.claimDue(t.clock.now(), { limit: 3, leaseMs })).due;
    const retryAt = t.clock.now() + 5_000;
    await store.recordOutcomes([attempt(sent!, 'delivered'), attempt(retried!, 'retrying', retryAt), attempt(dead!, 'dead')]);
    expect(norm(await row(sent!.id))).toMatchObject({ status: 'delivered', attempts: 1, leased_until: 0 });
    expect(norm(await row(retried!.id))).toEqual({ status: 'pending', attempts: 1, leased_until: 0, next_attempt_at: retryAt });
    expect(norm(await row(dead!.id))).toMatchObject({ status: 'dead', attempts: 1, leased_until: 0 });
    const logged = await t.all<{ delivery_id: number; attempt: number; outcome: string; status_code: number }>(
      'SELECT delivery_id, attempt, outcome, status_code FROM delivery_attempts ORDER BY delivery_id',
    );
    expect(logged.map((r) => [Number(r.delivery_id), Number(r.attempt), r.outcome, Number(r.status_code)])).toEqual([
      [sent!.id, 1, 'delivered', 204],
      [retried!.id, 1, 'retrying', 500],
      [dead!.id, 1, 'dead', 500],
    ]);
    t.clock.advance(4_999);
    expect((await store.claimDue(t.clock.now(), { limit: 10, leaseMs })).due).toEqual([]);
    t.clock.advance(1);
    expect((await store.claimDue(t.clock.now(), { limit: 10, leaseMs })).due.map((d) => [d.id, d.attempts])).toEqual([[retried!.id, 1]]);
  });

  test('a 410 disables the hook and cancels its queue; a cancelled delivery stays cancelled', async () => {
    const id = await hook('a4:83:e7:1f:2b:01');
    await queue('a4:83:e7:1f:2b:01', 3);
    const store = deliveryStore(t.db);
    const [gone, late] = (await store.claimDue(t.clock.now(), { limit: 2, leaseMs })).due;
    await store.recordOutcomes([attempt(gone!, 'disabled')]);
    expect(await t.value('SELECT status FROM hooks WHERE id = ?', id)).toBe('disabled');
    expect((await t.all<{ status: string }>('SELECT status FROM deliveries ORDER BY id')).map((r) => r.status)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
    ]);
    // The other delivery's attempt, in flight meanwhile, is logged; its delivery stays cancelled.
    await store.recordOutcomes([attempt(late!, 'delivered')]);
    expect(norm(await row(late!.id))).toMatchObject({ status: 'cancelled', attempts: 1 });
  });

  test('a record written again, or late after another replica recorded that attempt, changes nothing', async () => {
    await hook('a4:83:e7:1f:2b:01');
    await queue('a4:83:e7:1f:2b:01', 1);
    const [a, b] = [deliveryStore(t.db), deliveryStore(other)];
    const [due] = (await a.claimDue(t.clock.now(), { limit: 1, leaseMs })).due;
    const first = attempt(due!, 'retrying', t.clock.now() + 1_000);
    await a.recordOutcomes([first]);
    await a.recordOutcomes([first]);
    expect(norm(await row(due!.id))).toMatchObject({ status: 'pending', attempts: 1 });
    t.clock.advance(1_000);
    const [again] = (await b.claimDue(t.clock.now(), { limit: 1, leaseMs })).due;
    await b.recordOutcomes([attempt(again!, 'delivered')]);
    await a.recordOutcomes([attempt(again!, 'retrying', t.clock.now() + 1_000)]);
    expect(norm(await row(due!.id))).toMatchObject({ status: 'delivered', attempts: 2, leased_until: 0 });
    expect(
      (await t.all<{ attempt: number; outcome: string }>('SELECT attempt, outcome FROM delivery_attempts ORDER BY id')).map((r) => [
        Number(r.attempt),
        r.outcome,
      ]),
    ).toEqual([
      [1, 'retrying'],
      [2, 'delivered'],
    ]);
  });

  test('records ride along with a claim, and a delivery recorded by it is not leased by it', async () => {
    await hook('a4:83:e7:1f:2b:01');
    await queue('a4:83:e7:1f:2b:01', 2);
    const store = deliveryStore(t.db);
    const [retried, sent] = (await store.claimDue(t.clock.now(), { limit: 2, leaseMs })).due;
    await queue('a4:83:e7:1f:2b:01', 1);
    // The retry is due at once: still not leased by the claim that records it.
    const round = await store.claimDue(t.clock.now(), {
      limit: 10,
      leaseMs,
      records: [attempt(retried!, 'retrying', t.clock.now()), attempt(sent!, 'delivered')],
    });
    expect(round.due).toHaveLength(1);
    expect(ids(round.due)).not.toContain(retried!.id);
    expect(norm(await row(sent!.id))).toMatchObject({ status: 'delivered', attempts: 1 });
    expect(ids((await store.claimDue(t.clock.now(), { limit: 10, leaseMs })).due)).toEqual([retried!.id]);
  });

  test('renews the leases still held (not one another replica took over), and a release makes deliveries due at once', async () => {
    await hook('a4:83:e7:1f:2b:01');
    await queue('a4:83:e7:1f:2b:01', 2);
    const [a, b] = [deliveryStore(t.db), deliveryStore(other)];
    const held = (await a.claimDue(t.clock.now(), { limit: 2, leaseMs: 1_000 })).due;
    t.clock.advance(800);
    expect([...(await a.renewLeases(held, t.clock.now() + 1_000))].sort()).toEqual(ids(held).sort());
    for (const d of held) d.leased_until = t.clock.now() + 1_000;
    t.clock.advance(800);
    expect((await b.claimDue(t.clock.now(), { limit: 10, leaseMs: 1_000 })).due).toEqual([]);
    t.clock.advance(300);
    const taken = (await b.claimDue(t.clock.now(), { limit: 1, leaseMs: 1_000 })).due;
    expect([...(await a.renewLeases(held, t.clock.now() + 1_000))]).toEqual(ids(held).filter((id) => id !== taken[0]!.id));
    await b.releaseLeases(ids(taken), t.clock.now());
    expect(norm(await row(taken[0]!.id))).toMatchObject({ status: 'pending', leased_until: 0, next_attempt_at: t.clock.now() });
    expect(ids((await a.claimDue(t.clock.now(), { limit: 10, leaseMs })).due)).toEqual(ids(taken));
  });
});

describe('the watch queue', () => {
  /** Watches of keys that called the trigger at `triggeredAt`, due at `dueAt` (one each). */
  async function watch(db: Db, keyHash: string, dueAt: number, triggeredAt = t.clock.now(), paused: string | null = null): Promise<void> {
    await sqlHelpers(db).all(
      'INSERT INTO watches (key_hash, user_id, last_trigger_at, paused_reason, created_at, next_poll_at) VALUES (?, ?, ?, ?, ?, ?)',
      keyHash,
      'usr_ana',
      triggeredAt,
      paused,
      t.clock.now(),
      dueAt,
    );
  }
  const lease = (keyHash: string) =>
    t.one<{ leased_until: number; lease_owner: string | null; next_poll_at: number }>(
      'SELECT leased_until, lease_owner, next_poll_at FROM watches WHERE key_hash = ?',
      keyHash,
    );

  test('claims the most overdue watched keys first, at most `limit`; skips paused, unwatched and keys not due', async () => {
    const now = t.clock.now();
    await watch(t.db, 'k_late', now - 5_000);
    await watch(t.db, 'k_later', now - 9_000);
    await watch(t.db, 'k_due', now);
    await watch(t.db, 'k_next', now + 1);
    await watch(t.db, 'k_paused', now - 20_000, now, 'the key was rejected');
    await watch(t.db, 'k_stale', now - 20_000, now - 86_400_001);
    const queue = watchQueue(t.db);
    // Each with the time it was due: its next poll keeps that place (triggers/poll-key.ts).
    expect((await queue.claimDue('a', now, { limit: 2, leaseMs })).map((w) => [w.key_hash, w.next_poll_at])).toEqual([
      ['k_later', now - 9_000],
      ['k_late', now - 5_000],
    ]);
    expect(await lease('k_later')).toMatchObject({ lease_owner: 'a' });
    expect(Number((await lease('k_later'))!.leased_until)).toBe(now + leaseMs);
    expect((await queue.claimDue('a', now, { limit: 10, leaseMs })).map((w) => w.key_hash)).toEqual(['k_due']);
    expect(await queue.claimDue('a', now, { limit: 10, leaseMs })).toEqual([]);
  });

  test('a key with a hook is watched without a recent trigger call', async () => {
    const now = t.clock.now();
    await hook('a4:83:e7:1f:2b:01'); // enrols the key's watch
    const stale = now - 86_400_001;
    await t.all(
      'UPDATE watches SET last_trigger_at = ?, next_poll_at = ?, leased_until = 0, lease_owner = NULL WHERE key_hash = ?',
      stale,
      now,
      hashKey(keys.ana),
    );
    const [claimed] = await watchQueue(t.db).claimDue('a', now, { limit: 10, leaseMs });
    expect(claimed).toMatchObject({ key_hash: hashKey(keys.ana), user_id: 'usr_ana', paused_reason: null });
  });

  test('skips leased keys until the lease ends; renews only the owner’s leases; a release makes the key due at its next time', async () => {
    const now = t.clock.now();
    await watch(t.db, 'k_one', now);
    const [a, b] = [watchQueue(t.db), watchQueue(other)];
    expect(await a.claimDue('a', now, { limit: 10, leaseMs: 1_000 })).toHaveLength(1);
    t.clock.advance(999);
    expect(await b.claimDue('b', t.clock.now(), { limit: 10, leaseMs: 1_000 })).toEqual([]);
    await b.renewLeases('b', ['k_one'], t.clock.now() + 1_000);
    t.clock.advance(1);
    expect((await b.claimDue('b', t.clock.now(), { limit: 10, leaseMs: 1_000 })).map((w) => w.key_hash)).toEqual(['k_one']);
    await a.renewLeases('a', ['k_one'], t.clock.now() + 5_000);
    expect(Number((await lease('k_one'))!.leased_until)).toBe(t.clock.now() + 1_000);
    await b.renewLeases('b', ['k_one'], t.clock.now() + 5_000);
    expect(Number((await lease('k_one'))!.leased_until)).toBe(t.clock.now() + 5_000);
    await a.releaseLease('k_one', 'a', t.clock.now());
    expect(await lease('k_one')).toMatchObject({ lease_owner: 'b' });
    await b.releaseLease('k_one', 'b', t.clock.now() + 60_000);
    expect(await lease('k_one')).toMatchObject({ lease_owner: null });
    expect(Number((await lease('k_one'))!.leased_until)).toBe(0);
    expect(await a.claimDue('a', t.clock.now(), { limit: 10, leaseMs })).toEqual([]);
    t.clock.advance(60_000);
    expect((await a.claimDue('a', t.clock.now(), { limit: 10, leaseMs })).map((w) => w.key_hash)).toEqual(['k_one']);
  });

  test('two replicas claiming at once never lease the same key, and lose none', async () => {
    const now = t.clock.now();
    for (let i = 0; i < 40; i += 1) await watch(t.db, `k_${String(i).padStart(2, '0')}`, now - i);
    const queues = [watchQueue(t.db), watchQueue(other)];
    const claimed = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const got: string[] = [];
        for (let round = 0; round < 2; round += 1) got.push(...(await queues[i % 2]!.claimDue(`r${i}`, now, { limit: 2, leaseMs })).map((w) => w.key_hash));
        return got;
      }),
    );
    const all = claimed.flat();
    expect(new Set(all).size).toBe(all.length);
    const rest = (await queues[1]!.claimDue('last', now, { limit: 100, leaseMs })).map((w) => w.key_hash);
    expect(rest.filter((key) => all.includes(key))).toEqual([]);
    expect(all.length + rest.length).toBe(40);
    for (const [i, keysOf] of claimed.entries()) {
      for (const key of keysOf) expect((await lease(key))!.lease_owner).toBe(`r${i}`);
    }
  });
});

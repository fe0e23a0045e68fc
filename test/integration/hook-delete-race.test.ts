import { beforeEach, describe, expect, test } from '@jest/globals';
import { sql } from 'kysely';
import request from 'supertest';
import { hashKey } from '../../src/auth/keys.js';
import type { Db } from '../../src/db/database.js';
import { byEngine } from '../../src/db/engine.js';
import type { DeliveryStore } from '../../src/webhooks/delivery-store.js';
import type { AttemptRecord, Due, Outcome } from '../../src/webhooks/delivery-types.js';
import { PostgresDeliveryStore } from '../../src/webhooks/postgres-delivery-store.js';
import { SqliteDeliveryStore } from '../../src/webhooks/sqlite-delivery-store.js';
import type { TestApp } from '../helpers/app.js';
import { appWithSecondConnection } from '../helpers/two-connections.js';
import { testEngine } from '../helpers/engine.js';
import { queueOfflineEvents } from '../helpers/queued-events.js';
import { keys } from '../fixtures/catalog.js';

/**
 * Deleting a hook while the deliverer records finished attempts of its deliveries, renews or
 * releases their leases, or the retention gives them up or deletes them (issue 24): both land,
 * whatever their interleaving, and neither fails with a deadlock. On PostgreSQL the
 * interleaving is forced: a second connection (`other`, another replica) holds a delivery row,
 * the record starts and waits on it, the delete starts and waits too, and only then is the row
 * let go; each step waits until the server shows the backends blocked (pg_blocking_pids), not
 * for a time. SQLite runs every transaction alone: the same calls race and both land.
 */

const deliveryStore = (db: Db) =>
  byEngine<DeliveryStore>(db.engine, { sqlite: () => new SqliteDeliveryStore(db), postgres: () => new PostgresDeliveryStore(db) });

const rig = appWithSecondConnection('hook-delete-race');
let t: TestApp;
let other: Db;
beforeEach(() => {
  ({ app: t, other } = rig);
});

const leaseMs = 60_000;
const device = 'a4:83:e7:1f:2b:01';

/**
 * Runs `work` while another connection holds delivery `held`; once the work waits on it (and
 * `whileWorkWaits` has run), deletes hook `id` through the API, waits until the delete waits
 * too, then lets go. Both outcomes, settled.
 */
async function deleteHookDuring<T>(
  held: number,
  id: string,
  work: () => Promise<T>,
  whileWorkWaits: () => Promise<void> = async () => undefined,
): Promise<[PromiseSettledResult<T>, PromiseSettledResult<request.Response>]> {
  const hold = await holdDelivery(held);
  const running = work();
  let deleted: Promise<request.Response> | undefined;
  try {
    await hold.blocked(1);
    await whileWorkWaits();
    deleted = request(t.app)
      .delete(`/v1/hooks/${id}`)
      .set('X-API-Key', keys.ana)
      .then((res) => res);
    await hold.blocked(2);
  } finally {
    await hold.release();
  }
  return Promise.allSettled([running, deleted!]) as Promise<[PromiseSettledResult<T>, PromiseSettledResult<request.Response>]>;
}

async function hook(): Promise<string> {
  const res = await request(t.app)
    .post('/v1/hooks')
    .set('X-API-Key', keys.ana)
    .send({ target_url: `http://127.0.0.1:9/${device}`, device_ids: [device] })
    .expect(201);
  return res.body.id as string;
}

function attempt(d: Due, outcome: Outcome): AttemptRecord {
  const statusCode = { delivered: 204, retrying: 500, dead: 500, disabled: 410 }[outcome];
  return { delivery: d, attempt: d.attempts + 1, outcome, statusCode, error: null, durationMs: 2, attemptedAt: t.clock.now(), nextAttemptAt: null };
}

/**
 * PostgreSQL: `other` locks the delivery `id` in a transaction of its own, held until `release`;
 * `blocked(n)` resolves once `n` backends wait behind it, directly or through one another.
 * SQLite: nothing to hold (its one writer runs transactions one at a time).
 */
async function holdDelivery(id: number): Promise<{ blocked(n: number): Promise<void>; release(): Promise<void> }> {
  if (testEngine !== 'postgres') return { blocked: async () => undefined, release: async () => undefined };
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding!: (pid: number) => void;
  const held = new Promise<number>((resolve) => (holding = resolve));
  const done = other.transaction(async (trx) => {
    await sql`SELECT id FROM deliveries WHERE id = ${id} FOR UPDATE`.execute(trx);
    const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
    holding(rows[0]!.pid);
    await released;
  });
  const pid = await held;
  return {
    blocked: (n) => blockedBehind(pid, n),
    async release() {
      release();
      await done;
    },
  };
}

/** Resolves once `n` backends wait behind backend `pid`, directly or through one another. */
async function blockedBehind(pid: number, n: number): Promise<void> {
  for (;;) {
    const { rows } = await sql<{ n: string }>`
      WITH RECURSIVE w(pid) AS (
        SELECT pid FROM pg_stat_activity WHERE ${pid}::int = ANY(pg_blocking_pids(pid))
        UNION SELECT a.pid FROM pg_stat_activity a JOIN w ON w.pid = ANY(pg_blocking_pids(a.pid))
      ) SELECT count(*) AS n FROM w`.execute(other.kysely);
    if (Number(rows[0]!.n) >= n) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The lock order: waiting on a delivery, the work already holds the row of hook `id`. */
const holdsHook = (id: string) => async () => {
  if (testEngine === 'postgres')
    await expect(sql`SELECT id FROM hooks WHERE id = ${id} FOR UPDATE NOWAIT`.execute(other.kysely)).rejects.toMatchObject({ code: '55P03' });
};

const expectAllGone = async (id: string) => {
  expect(Number(await t.value('SELECT count(*) FROM hooks WHERE id = ?', id))).toBe(0);
  expect(Number(await t.value('SELECT count(*) FROM deliveries'))).toBe(0);
  expect(Number(await t.value('SELECT count(*) FROM delivery_attempts'))).toBe(0);
};

const day = 86_400_000;

describe('deleting a hook while its attempts are recorded', () => {
  test.each([
    ['a 410 (the hook disabled, its queue cancelled)', 'disabled' as const],
    ['a delivered attempt', 'delivered' as const],
  ])('the record and the delete both land: %s', async (_name, outcome) => {
    const id = await hook();
    await queueOfflineEvents(t.db, hashKey(keys.ana), device, ['evt_1', 'evt_2', 'evt_3'], t.clock.now());
    const store = deliveryStore(t.db);
    const [first, second] = (await store.claimDue(t.clock.now(), { limit: 2, leaseMs })).due;

    const [record, del] = await deleteHookDuring(
      first!.id,
      id,
      () => store.recordOutcomes([attempt(first!, outcome), attempt(second!, 'delivered')]),
      holdsHook(id),
    );
    expect(record).toEqual({ status: 'fulfilled', value: undefined });
    expect(del.status === 'fulfilled' && del.value.status).toBe(204);
    await expectAllGone(id);
  });

  test('a claim that records the attempts of a deleted hook leases the rest of the queue', async () => {
    const id = await hook();
    await queueOfflineEvents(t.db, hashKey(keys.ana), device, ['evt_1', 'evt_2'], t.clock.now());
    const store = deliveryStore(t.db);
    const [first, second] = (await store.claimDue(t.clock.now(), { limit: 2, leaseMs })).due;

    const [claim, del] = await deleteHookDuring(second!.id, id, () =>
      store.claimDue(t.clock.now(), { limit: 10, leaseMs, records: [attempt(first!, 'retrying'), attempt(second!, 'delivered')] }),
    );
    expect(claim.status).toBe('fulfilled');
    expect(del.status === 'fulfilled' && del.value.status).toBe(204);
    expect(Number(await t.value('SELECT count(*) FROM deliveries'))).toBe(0);
  });
});

describe('deleting a hook while its leases are renewed or released, or the retention gives its deliveries up', () => {
  // Each waits on the second delivery, holding the first; the hook's row is locked before either.
  test.each<[string, (store: DeliveryStore, held: Due[]) => Promise<unknown>]>([
    ['the deliverer renews its leases', (store: DeliveryStore, held: Due[]) => store.renewLeases(held, t.clock.now() + leaseMs)],
    [
      'a stopping deliverer releases its leases',
      (store: DeliveryStore, held: Due[]) =>
        store.releaseLeases(
          held.map((d) => d.id),
          t.clock.now(),
        ),
    ],
    [
      'the retention gives up deliveries past it',
      async () => {
        t.clock.advance(8 * day);
        return t.services.retention.runOnce();
      },
    ],
  ])('the hook first, then both land: %s', async (_name, work) => {
    const id = await hook();
    await queueOfflineEvents(t.db, hashKey(keys.ana), device, ['evt_1', 'evt_2'], t.clock.now());
    const store = deliveryStore(t.db);
    const held = (await store.claimDue(t.clock.now(), { limit: 2, leaseMs })).due;

    const [job, del] = await deleteHookDuring(held[1]!.id, id, () => work(store, held), holdsHook(id));
    expect(job.status).toBe('fulfilled');
    expect(del.status === 'fulfilled' && del.value.status).toBe(204);
    await expectAllGone(id);
  });
});

describe('the retention deleting old deliveries', () => {
  // Their hook's delete in the documented order (the hook, then its deliveries), the cascade
  // caught part way: it holds the second delivery when the retention's prune (which takes no
  // hook) has deleted the attempts and waits on it, then goes on. The prune, first to look
  // (`other` waits 10 s before it does), is the deadlock's victim, and is run again.
  test('is run again when it loses a deadlock to a delete of their hook', async () => {
    const id = await hook();
    await queueOfflineEvents(t.db, hashKey(keys.ana), device, ['evt_1', 'evt_2'], t.clock.now());
    const store = deliveryStore(t.db);
    const [first, second] = (await store.claimDue(t.clock.now(), { limit: 2, leaseMs })).due;
    await store.recordOutcomes([attempt(first!, 'delivered'), attempt(second!, 'delivered')]);
    t.clock.advance(8 * day);
    if (testEngine !== 'postgres') {
      await Promise.all([t.services.retention.runOnce(), request(t.app).delete(`/v1/hooks/${id}`).set('X-API-Key', keys.ana).expect(204)]);
      return expectAllGone(id);
    }
    let pid!: (n: number) => void;
    const holding = new Promise<number>((resolve) => (pid = resolve));
    let proceed!: () => void;
    const asked = new Promise<void>((resolve) => (proceed = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const deleting = other.transaction(async (trx) => {
      await sql`SET LOCAL deadlock_timeout = '10s'`.execute(trx);
      await sql`SELECT id FROM hooks WHERE id = ${id} FOR UPDATE`.execute(trx);
      await sql`SELECT id FROM deliveries WHERE id = ${second!.id} FOR UPDATE`.execute(trx);
      pid((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid);
      await asked;
      await sql`DELETE FROM hooks WHERE id = ${id}`.execute(trx);
      await released;
    });
    const blocker = await holding;
    const sweep = t.services.retention.runOnce();
    try {
      await blockedBehind(blocker, 1);
    } finally {
      proceed();
      release();
    }
    const [report] = await Promise.all([sweep, deleting]);
    expect(report.events).toBe(2);
    await expectAllGone(id);
  });
});

describe('a delete chosen as the victim of a deadlock', () => {
  // Another transaction (not the deliverer's, which takes the hook first) holds a delivery and
  // then asks for the hook the delete holds: PostgreSQL breaks the cycle by failing one of the
  // two. `other`'s session waits 10 s before it looks for a deadlock, the delete's 1 s (the
  // default), so the delete is the one failed; it is retried and answers 204, not 500.
  test('is retried: the hook is deleted and the answer is 204', async () => {
    const id = await hook();
    await queueOfflineEvents(t.db, hashKey(keys.ana), device, ['evt_1', 'evt_2'], t.clock.now());
    const [first] = (await deliveryStore(t.db).claimDue(t.clock.now(), { limit: 1, leaseMs })).due;
    if (testEngine !== 'postgres') {
      await request(t.app).delete(`/v1/hooks/${id}`).set('X-API-Key', keys.ana).expect(204);
      return;
    }
    let pid!: (n: number) => void;
    const held = new Promise<number>((resolve) => (pid = resolve));
    let proceed!: () => void;
    const asked = new Promise<void>((resolve) => (proceed = resolve));
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const other_ = other.transaction(async (trx) => {
      await sql`SET LOCAL deadlock_timeout = '10s'`.execute(trx);
      await sql`SELECT id FROM deliveries WHERE id = ${first!.id} FOR UPDATE`.execute(trx);
      pid((await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx)).rows[0]!.pid);
      await asked;
      await sql`SELECT id FROM hooks WHERE id = ${id} FOR KEY SHARE`.execute(trx);
      await released;
    });
    const blocker = await held;
    const deleted = request(t.app)
      .delete(`/v1/hooks/${id}`)
      .set('X-API-Key', keys.ana)
      .then((res) => res);
    try {
      for (;;) {
        const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity WHERE ${blocker}::int = ANY(pg_blocking_pids(pid))`.execute(
          t.db.kysely,
        );
        if (Number(rows[0]!.n) >= 1) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      proceed();
    } finally {
      proceed();
      release();
    }
    const [res] = await Promise.all([deleted, other_]);
    expect(res.status).toBe(204);
    expect(Number(await t.value('SELECT count(*) FROM hooks WHERE id = ?', id))).toBe(0);
    expect(Number(await t.value('SELECT count(*) FROM deliveries'))).toBe(0);
  });
});

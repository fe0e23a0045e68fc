import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { testEngine } from '../helpers/engine.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * Several replicas, in one process: two connectors ("replicas") built on one database — the same
 * SQLite file, or the same PostgreSQL schema — share the failed-attempt limit, hook
 * identities and poll leases. The multi-process version (real replicas, kill -9) is
 * test/replicas/.
 */

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function replicas(env: Record<string, string> = {}, dataset: unknown = catalog()): Promise<[TestApp, TestApp, ManualClock]> {
  const dir = mkdtempSync(join(tmpdir(), 'replicas-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const databasePath = join(dir, 'connector.db');
  const clock = new ManualClock();
  const common = { databasePath, clock, env: { CONNECTOR_SECRET: 'ab'.repeat(32), ...env } };
  const a = await buildTestApp({ ...common, dataset, keep: true });
  cleanups.push(() => a.close());
  const b = await buildTestApp(common);
  cleanups.push(() => b.close());
  return [a, b, clock];
}

describe('the failed-attempt limit counts across replicas, when an attempt starts', () => {
  test('100 concurrent guesses with distinct bad keys, spread over two replicas: at most 20 reach the upstream', async () => {
    const upstream = await new FakeUpstream(catalog()).start();
    cleanups.push(() => upstream.stop());
    const [a, b] = await replicas({ DEVICE_API_URL: upstream.baseUrl, UPSTREAM_RETRIES: '0' }, undefined);
    const guesses = Array.from({ length: 100 }, (_, i) =>
      request((i % 2 === 0 ? a : b).app)
        .get('/devices')
        .set('Authorization', `Bearer sk_guess_${String(i).padStart(16, '0')}`),
    );
    const statuses = (await Promise.all(guesses)).map((res) => res.status);
    expect(upstream.callsTo('/devices').length).toBeLessThanOrEqual(20);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(20);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(80);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    // Both replicas now refuse the client, even with a good key.
    await request(a.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(429);
    await request(b.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(429);
  });

  test('good keys give their attempt back: 19 failures on one replica, then a good key on the other still works', async () => {
    const [a, b] = await replicas();
    for (let i = 0; i < 19; i += 1) {
      await request(a.app)
        .get('/devices')
        .set('Authorization', `Bearer sk_guess_${String(i).padStart(16, '0')}`)
        .expect(401);
    }
    for (let i = 0; i < 5; i += 1) await request(b.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(200);
    await request(b.app).get('/devices').set('Authorization', 'Bearer sk_guess_last_one_000000').expect(401);
    await request(a.app).get('/devices').set('Authorization', 'Bearer sk_guess_one_too_many_0000').expect(429);
  });
});

describe('hooks', () => {
  test('two identical subscriptions at once on two replicas make one hook', async () => {
    const [a, b] = await replicas({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    const receiver = await new Receiver().start();
    cleanups.push(() => receiver.stop());
    const body = { target_url: receiver.url, events: ['device.offline'] };
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        request((i % 2 === 0 ? a : b).app)
          .post('/v1/hooks')
          .set('X-API-Key', keys.ana)
          .send(body),
      ),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 200, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(new Set(results.map((r) => r.body.secret)).size).toBe(1);
    expect(await a.value('SELECT count(*) FROM hooks')).toBe(1);
  });
});

/** Two replicas, a hook on a local receiver and one delivery queued (a device went offline). */
async function replicasWithOneDelivery(): Promise<[TestApp, TestApp, ManualClock]> {
  const [a, b, clock] = await replicas({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  const receiver = await new Receiver().start();
  cleanups.push(() => receiver.stop());
  await request(a.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: receiver.url }).expect(201);
  clock.advance(5 * 60_000);
  expect((await pollDue(a)).events).toBe(1);
  return [a, b, clock];
}

describe('delivery records', () => {
  test('an attempt recorded twice, or late after the other replica recorded it, counts once', async () => {
    const [a, b, clock] = await replicasWithOneDelivery();
    const claim = (t: TestApp) => t.services.deliveryQueue.claim({ limit: 10, leaseMs: 60_000 });
    const [due] = await claim(a);
    expect(due).toBeDefined();
    const first = {
      delivery: due!,
      attempt: 1,
      outcome: 'retrying' as const,
      statusCode: 500,
      error: null,
      durationMs: 3,
      attemptedAt: clock.now(),
      nextAttemptAt: clock.now() + 1000,
    };
    // Written again, as after a commit whose answer was lost: no second count, no second row.
    await a.services.deliveryQueue.record([first]);
    await a.services.deliveryQueue.record([first]);
    const state = () => a.one<{ status: string; attempts: number }>('SELECT status, attempts FROM deliveries WHERE id = ?', due!.id);
    expect(await state()).toEqual({ status: 'pending', attempts: 1 });
    expect(await a.value('SELECT count(*) FROM delivery_attempts')).toBe(1);

    // The other replica sends attempt 2 and records it; a late record of attempt 2 from the first is skipped.
    clock.advance(1000);
    const [again] = await claim(b);
    expect(again).toMatchObject({ id: due!.id, attempts: 1 });
    await b.services.deliveryQueue.record([{ ...first, delivery: again!, attempt: 2, outcome: 'delivered', statusCode: 204, nextAttemptAt: null }]);
    await a.services.deliveryQueue.record([{ ...first, delivery: again!, attempt: 2, outcome: 'retrying', statusCode: 500 }]);
    expect(await state()).toEqual({ status: 'delivered', attempts: 2 });
    expect(await a.all('SELECT attempt, outcome FROM delivery_attempts ORDER BY id')).toEqual([
      { attempt: 1, outcome: 'retrying' },
      { attempt: 2, outcome: 'delivered' },
    ]);
  });
});

describe('delivery leases', () => {
  test('a held lease is renewed and keeps the delivery from the other replica; one that ran out and was taken over is not renewed', async () => {
    const [a, b, clock] = await replicasWithOneDelivery();
    const claim = (t: TestApp) => t.services.deliveryQueue.claim({ limit: 10, leaseMs: 1000 });
    const held = await claim(a);
    expect(held).toHaveLength(1);
    clock.advance(800);
    expect(await a.services.deliveryQueue.renew(held, 1000)).toEqual(held);
    expect(held[0]!.leased_until).toBe(clock.now() + 1000);
    clock.advance(800); // past the first lease's end, within the renewed one
    expect(await claim(b)).toEqual([]);
    clock.advance(300); // the renewed lease ran out: the other replica takes the delivery
    expect(await claim(b)).toHaveLength(1);
    expect(await a.services.deliveryQueue.renew(held, 1000)).toEqual([]);
  });
});

describe('poll leases', () => {
  test('replicas claim disjoint keys; a lease that ends hands the key to the other replica', async () => {
    const [a, b, clock] = await replicas();
    for (const key of [keys.ana, keys.ben, keys.zoe]) await request(a.app).get('/v1/triggers/device-status').set('X-API-Key', key).expect(200);
    clock.advance(a.config.POLL_INTERVAL_MS); // every key due
    const claimA = () => a.services.watches.claim('replica-a', { limit: 2, leaseMs: 60_000 });
    const claimB = () => b.services.watches.claim('replica-b', { limit: 10, leaseMs: 60_000 });
    // PostgreSQL: at the same instant (SKIP LOCKED). SQLite: one after the other — two
    // connections to one file in one thread would block each other on the write lock, which
    // separate processes (the real replicas) do not.
    const [fromA, fromB] = testEngine === 'postgres' ? await Promise.all([claimA(), claimB()]) : [await claimA(), await claimB()];
    const claimed = [...fromA, ...fromB].map((w) => w.key_hash);
    expect(claimed).toHaveLength(3);
    expect(new Set(claimed).size).toBe(3);
    // Nothing is free while the leases run, though every key is due.
    expect(await b.services.watches.claim('replica-b', { limit: 10, leaseMs: 60_000 })).toEqual([]);
    clock.advance(60_001);
    expect(await b.services.watches.claim('replica-b', { limit: 10, leaseMs: 60_000 })).toHaveLength(3);
  });

  test('a polled key is not due again for one interval, whichever replica asks', async () => {
    const [a, b, clock] = await replicas({ POLL_INTERVAL_MS: '30000' });
    await request(a.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
    // The enrolment polled the key (its baseline): due again in 30 s.
    expect(await b.services.watches.claim('replica-b', { limit: 10, leaseMs: 60_000 })).toEqual([]);
    clock.advance(29_999);
    expect(await a.services.watches.claim('replica-a', { limit: 10, leaseMs: 60_000 })).toEqual([]);
    clock.advance(1);
    const due = await b.services.watches.claim('replica-b', { limit: 10, leaseMs: 60_000 });
    expect(due).toHaveLength(1);
    expect(await a.services.watches.claim('replica-a', { limit: 10, leaseMs: 60_000 })).toEqual([]);
  });

  test('a poll that outlived its lease writes nothing; the replica that holds the key now does', async () => {
    const [a, b, clock] = await replicas({ POLL_INTERVAL_MS: '30000' });
    await request(a.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
    clock.advance(30_000); // due
    const [watch] = await a.services.watches.claim('replica-a', { limit: 1, leaseMs: 1000 });
    clock.advance(1001);
    const [taken] = await b.services.watches.claim('replica-b', { limit: 1, leaseMs: 60_000 });
    expect(taken?.key_hash).toBe(watch!.key_hash);
    await expect(a.services.poller.pollKey(watch!, { owner: 'replica-a' })).rejects.toThrow('poll lease lost');
    await expect(b.services.poller.pollKey(taken!, { owner: 'replica-b' })).resolves.toEqual([]);
  });
});

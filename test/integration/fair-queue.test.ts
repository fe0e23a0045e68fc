import { afterEach, expect, test } from '@jest/globals';
import request from 'supertest';
import { hashKey } from '../../src/auth/keys.js';
import type { DeviceEvent } from '../../src/catalog/event.js';
import { queueDeliveries } from '../../src/webhooks/fan-out.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * Fairness (docs/webhooks.md): within one target origin, due deliveries are claimed across
 * hooks, so one hook's backlog delays only that hook.
 */
let t: TestApp;
afterEach(async () => {
  await t.close();
});

const keyHash = hashKey(keys.ana);

/** `count` events of one device, logged now and fanned out to the key's hooks. */
async function queue(device: string, count: number, tag: string): Promise<void> {
  const now = t.clock.now();
  const events = Array.from({ length: count }, (_, i) => ({
    id: `evt_${tag}_${i}`,
    type: 'device.offline',
    occurred_at: '2026-06-01T12:00:00.000000Z',
    device: { id: device },
    previous_status: 'online',
    status: 'offline',
  })) as unknown as DeviceEvent[];
  await t.db.transaction(async (trx) => {
    const rows = await trx
      .insertInto('events')
      .values(events.map((e) => ({ id: e.id, key_hash: keyHash, type: e.type, device_id: device, occurred_at: e.occurred_at, payload: JSON.stringify(e), created_at: now })))
      .returning(['seq', 'id'])
      .execute();
    await queueDeliveries(trx, keyHash, events, new Map(rows.map((r) => [r.id, Number(r.seq)])), now);
  });
}

async function hook(path: string, device: string): Promise<string> {
  const res = await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: `http://127.0.0.1:9/${path}`, device_ids: [device] }).expect(201);
  return res.body.id as string;
}

const claim = (limit: number) => t.services.deliveryQueue.claim({ limit, leaseMs: 60_000 });

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
  await t.db.kysely.updateTable('deliveries').set({ next_attempt_at: t.clock.now() + 60_000 }).execute();
  expect(await claim(8)).toEqual([]);
  t.clock.advance(60_000);
  expect(await claim(8)).toHaveLength(8);
});

test('rooms: at most the room left per origin this replica holds, `fresh` for an origin it does not; an origin with no room is skipped', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const held = await hook('held', 'a4:83:e7:1f:2b:01');
  const res = await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: 'http://127.0.0.1:10/other', device_ids: ['a4:83:e7:1f:2b:02'] }).expect(201);
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

test("records ride with the claim, and a hook's attempt log keeps its latest attempts however many were recorded", async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const busy = await hook('busy', 'a4:83:e7:1f:2b:01');
  await queue('a4:83:e7:1f:2b:01', 450, 'many');
  t.clock.advance(1);
  let records: Parameters<typeof t.services.deliveryQueue.claimRound>[0]['records'] = [];
  let claimed = 0;
  for (;;) {
    const round = await t.services.deliveryQueue.claimRound({ limit: 50, leaseMs: 60_000, records });
    claimed += round.due.length;
    records = round.due.map((d) => ({ delivery: d, attempt: 1, outcome: 'delivered' as const, statusCode: 204, error: null, durationMs: 1, attemptedAt: t.clock.now(), nextAttemptAt: null }));
    if (round.due.length === 0) break;
  }
  expect(claimed).toBe(450);
  expect(await t.value("SELECT count(*) FROM deliveries WHERE status = 'delivered'")).toBe(450);
  expect(Number(await t.value('SELECT count(*) FROM delivery_attempts'))).toBeLessThanOrEqual(200);
  const listed = await request(t.app).get(`/v1/hooks/${busy}/deliveries`).set('X-API-Key', keys.ana).expect(200);
  expect(listed.body).toHaveLength(100);
  expect(listed.body[0].event_id).toBe('evt_many_449');
});

import { expect, test } from '@jest/globals';
import type { TestApp } from '../helpers/app.js';
import { hookCalls, hookKit } from '../helpers/hook-kit.js';
import { pollDue } from '../helpers/poll.js';

// docs/webhooks.md, "The attempt log": a delivery keeps its first attempt and its latest ones,
// 20 in all (the default bound; a retry schedule of one delay makes rounds of 2 attempts), and
// its detail says how many were dropped between them. Ana's only online device goes offline
// once the 5-minute heartbeat timeout passes.
const timeoutMs = 300_000;
const bound = 20;

interface Attempt {
  attempt: number;
  attempted_at: string;
  status_code: number | null;
  next_attempt_at: string | null;
  outcome: string;
}

interface Detail {
  delivery_id: string;
  delivery_status: string;
  attempt: number;
  status_code: number | null;
  attempted_at: string;
  next_attempt_at: string | null;
  attempts_dropped: number;
  attempts: Attempt[];
}

const { app, receiver } = hookKit(timeoutMs);
const call = hookCalls;

test('a delivery tried again and again (resends and recovers) keeps its first and latest attempts within the bound, and says how many went', async () => {
  const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
  const r = await receiver();
  const hook = (await call(t).post('/v1/hooks', { target_url: r.url }).expect(201)).body as { id: string };
  const since = new Date(t.clock.now()).toISOString();
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);
  const [item] = (await call(t).get(`/v1/hooks/${hook.id}/deliveries`).expect(200)).body as Array<{ delivery_id: string }>;
  const path = `/v1/hooks/${hook.id}/deliveries/${item!.delivery_id}`;
  const detail = async () => (await call(t).get(path).expect(200)).body as Detail;
  const logged = async (): Promise<number> => Number(await t.value('SELECT count(*) FROM delivery_attempts'));

  /** One round of its retry schedule: two failed attempts, then dead. */
  async function round(): Promise<void> {
    r.respondWith({ status: 500 }, { status: 503 });
    expect(await t.services.deliverer.drain()).toBe(1);
    t.clock.advance(1000);
    expect(await t.services.deliverer.drain()).toBe(1);
    expect((await detail()).delivery_status).toBe('dead');
  }

  await round();
  const first = (await detail()).attempts[0]!;
  let most = 0;
  for (let i = 1; i < 15; i += 1) {
    // Every other round by a resend, the others by a recover of the hook's dead deliveries.
    if (i % 2 === 0) await call(t).post(`${path}/resend`).expect(202);
    else {
      expect((await call(t).post(`/v1/hooks/${hook.id}/recover`, { since }).expect(202)).body).toEqual({ count: 1 });
      await t.services.hookOps.settled();
    }
    await round();
    most = Math.max(most, await logged());
  }
  expect(r.received).toHaveLength(30);
  expect(most).toBe(bound);

  // One more resend, whose first attempt fails: retrying, the next attempt due in a second.
  await call(t).post(`${path}/resend`).expect(202);
  r.respondWith({ status: 502 });
  expect(await t.services.deliverer.drain()).toBe(1);
  const now = await detail();
  expect(now.attempts.length).toBeLessThanOrEqual(bound);
  expect(now.attempts.length + now.attempts_dropped).toBe(31);
  expect(now.attempts_dropped).toBeGreaterThan(0);
  // The first attempt stays; the latest is the last shown, with the next attempt's time.
  expect(now.attempts[0]).toEqual(first);
  const latest = now.attempts[now.attempts.length - 1]!;
  expect(latest).toMatchObject({ attempt: 1, status_code: 502, outcome: 'retrying', next_attempt_at: expect.any(String) });
  expect(now).toMatchObject({
    delivery_status: 'pending',
    attempt: 1,
    status_code: 502,
    attempted_at: latest.attempted_at,
    next_attempt_at: latest.next_attempt_at,
  });
  // The latest attempts are kept, oldest first: rounds of 1, 2, then this round's 1.
  expect(now.attempts.slice(-5).map((a) => a.attempt)).toEqual([1, 2, 1, 2, 1]);
  const times = now.attempts.map((a) => a.attempted_at);
  expect([...times].sort()).toEqual(times);
  // Delivered at last: still within the bound.
  t.clock.advance(1000);
  expect(await t.services.deliverer.drain()).toBe(1);
  const done = await detail();
  expect(done).toMatchObject({ delivery_status: 'delivered', attempt: 2, next_attempt_at: null });
  expect(done.attempts.length).toBeLessThanOrEqual(bound);
  expect(done.attempts.length + done.attempts_dropped).toBe(32);
  expect(await logged()).toBeLessThanOrEqual(bound);
});

test('a delivery that never needed trimming says none were dropped', async () => {
  const t: TestApp = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
  const r = await receiver();
  const hook = (await call(t).post('/v1/hooks', { target_url: r.url }).expect(201)).body as { id: string };
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);
  expect(await t.services.deliverer.drain()).toBe(1);
  const [item] = (await call(t).get(`/v1/hooks/${hook.id}/deliveries`).expect(200)).body as Array<{ delivery_id: string }>;
  const detail = (await call(t).get(`/v1/hooks/${hook.id}/deliveries/${item!.delivery_id}`).expect(200)).body as Detail;
  expect(detail).toMatchObject({ delivery_status: 'delivered', attempts_dropped: 0 });
  expect(detail.attempts).toHaveLength(1);
});

import { describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import type { TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import type { Receiver } from '../helpers/receiver.js';
import { hookCalls, hookKit } from '../helpers/hook-kit.js';
import { turnsDuring } from '../helpers/event-loop.js';
import { keys } from '../fixtures/catalog.js';
import { hashKey } from '../../src/auth/keys.js';
import { formatMicros } from '../../src/time/timestamps.js';

// docs/webhooks.md, "When something goes wrong": a hook's deliveries paged and filtered, one
// delivery with every attempt, resend and recover. Ana's only online device is 01; it goes
// offline once the 5-minute heartbeat timeout passes. Clocks start 5 minutes before the real
// time, so webhook-timestamps are current for the standardwebhooks package's clock check.
const dev01 = 'a4:83:e7:1f:2b:01';
const timeoutMs = 300_000;

interface Hook {
  id: string;
  secret: string;
  target_url: string;
}

interface Item {
  delivery_id: string;
  event_id: string;
  event_type: string;
  webhook_id: string;
  attempt: number;
  status_code: number | null;
  outcome: string | null;
  next_attempt_at: string | null;
  delivery_status: string;
}

const { app, receiver } = hookKit(timeoutMs);
const call = hookCalls;

async function subscribe(t: TestApp, url: string): Promise<Hook> {
  return (await call(t).post('/v1/hooks', { target_url: url }).expect(201)).body as Hook;
}

const list = async (t: TestApp, hookId: string, query = '') => (await call(t).get(`/v1/hooks/${hookId}/deliveries${query}`).expect(200)).body as Item[];

/** Device 01 goes offline (timeout) or comes back (a heartbeat now); a poll logs it. */
async function offline(t: TestApp): Promise<void> {
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);
}
async function online(t: TestApp): Promise<void> {
  await t.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', formatMicros(t.clock.now() * 1000), dev01);
  expect((await pollDue(t)).events).toBe(1);
}

/** Three tries against a receiver that fails them all: one dead delivery (schedule 1 s). */
async function deadDelivery(t: TestApp, r: Receiver): Promise<void> {
  r.respondWith({ status: 500 }, { status: 503 });
  await t.services.deliverer.drain();
  t.clock.advance(1000);
  await t.services.deliverer.drain();
}

describe('GET /v1/hooks/{id}/deliveries', () => {
  test('newest first, paged with Link and X-Total-Count, filtered by status, event and time; bad parameters are 400s', async () => {
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    await offline(t);
    const firstAt = t.clock.now();
    await deadDelivery(t, r);
    t.clock.advance(60_000);
    await online(t);
    await t.services.deliverer.drain();
    t.clock.advance(60_000);
    await call(t).post(`/v1/hooks/${hook.id}/test`).expect(200);

    const all = await list(t, hook.id);
    expect(all.map((d) => [d.event_type, d.delivery_status, d.attempt])).toEqual([
      ['webhook.test', 'delivered', 1],
      ['device.online', 'delivered', 1],
      ['device.offline', 'dead', 2],
    ]);
    expect(new Set(all.map((d) => d.delivery_id)).size).toBe(3);

    const first = await call(t).get(`/v1/hooks/${hook.id}/deliveries?limit=2`).expect(200);
    expect(first.headers['x-total-count']).toBe('3');
    expect(first.body.map((d: Item) => d.delivery_id)).toEqual(all.slice(0, 2).map((d) => d.delivery_id));
    const next = new URL(/<([^>]+)>; rel="next"/.exec(first.headers.link as string)![1]!);
    const second = await call(t).get(`${next.pathname}${next.search}`).expect(200);
    expect(second.body.map((d: Item) => d.delivery_id)).toEqual([all[2]!.delivery_id]);
    expect(second.headers.link).toBeUndefined();

    expect((await list(t, hook.id, '?status=dead')).map((d) => d.event_type)).toEqual(['device.offline']);
    expect((await list(t, hook.id, `?event_id=${all[1]!.event_id}`)).map((d) => d.delivery_id)).toEqual([all[1]!.delivery_id]);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(await list(t, hook.id, `?since=${iso(firstAt + 1)}&status=dead`)).toEqual([]);
    expect((await list(t, hook.id, `?until=${iso(firstAt + 1)}`)).map((d) => d.event_type)).toEqual(['device.offline']);

    const bad = async (query: string) => (await call(t).get(`/v1/hooks/${hook.id}/deliveries${query}`).expect(400)).body.message as string;
    expect(await bad('?limit=0')).toBe('limit must be an integer from 1 to 500');
    expect(await bad('?status=lost')).toBe('status must be one of pending, held, delivered, dead, cancelled, failed');
    expect(await bad('?since=yesterday')).toBe('since must be a timestamp such as 2026-06-01T12:00:00Z');
    expect(await bad('?cursor=nope')).toBe('cursor is not valid; start again without it');
    await call(t, keys.zoe).get(`/v1/hooks/${hook.id}/deliveries`).expect(404, { message: 'Hook not found' });
  });

  test('one delivery with every attempt: headers sent (never the secret), status, answer, duration, error, next attempt', async () => {
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    await offline(t);
    await deadDelivery(t, r);
    const [dead] = await list(t, hook.id);
    const detail = (await call(t).get(`/v1/hooks/${hook.id}/deliveries/${dead!.delivery_id}`).expect(200)).body as Item & {
      attempts: Array<{
        attempt: number;
        status_code: number;
        request_headers: Record<string, string>;
        response_body: string;
        next_attempt_at: string | null;
        outcome: string;
        duration_ms: number;
      }>;
    };
    expect(detail).toMatchObject({ delivery_id: dead!.delivery_id, delivery_status: 'dead', webhook_id: r.received[0]!.headers['webhook-id'] });
    expect(detail.attempts.map((a) => [a.attempt, a.status_code, a.outcome, a.next_attempt_at === null])).toEqual([
      [1, 500, 'retrying', false],
      [2, 503, 'dead', true],
    ]);
    detail.attempts.forEach((a, i) => {
      expect(a.request_headers).toMatchObject({
        'webhook-id': r.received[i]!.headers['webhook-id'],
        'webhook-timestamp': r.received[i]!.headers['webhook-timestamp'],
        'webhook-signature': r.received[i]!.headers['webhook-signature'],
        'content-type': 'application/json',
      });
      expect(JSON.stringify(a.request_headers)).not.toContain(hook.secret.slice(6));
      expect(a.response_body).toBe('');
      expect(a.duration_ms).toEqual(expect.any(Number));
    });
    await call(t).get(`/v1/hooks/${hook.id}/deliveries/dlv_999999`).expect(404, { message: 'Delivery not found' });
    await call(t).get(`/v1/hooks/${hook.id}/deliveries/nope`).expect(404, { message: 'Delivery not found' });
    const other = await call(t)
      .post('/v1/hooks', { target_url: `${r.url}?other` })
      .expect(201);
    await call(t).get(`/v1/hooks/${other.body.id}/deliveries/${dead!.delivery_id}`).expect(404, { message: 'Delivery not found' });
  });
});

describe('POST /v1/hooks/{id}/deliveries/{delivery_id}/resend', () => {
  test('a dead delivery: pending again with a fresh schedule, sent now with the same webhook-id; safe to repeat', async () => {
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    await offline(t);
    await deadDelivery(t, r);
    const [dead] = await list(t, hook.id);
    const path = `/v1/hooks/${hook.id}/deliveries/${dead!.delivery_id}/resend`;
    expect((await call(t).post(path).expect(202)).body).toMatchObject({ delivery_id: dead!.delivery_id, delivery_status: 'pending' });
    await call(t).post(path).expect(202);
    r.respondWith({ status: 500 });
    expect(await t.services.deliverer.drain()).toBe(1);
    // A fresh schedule: a failure is retried again, not dead at once.
    expect((await list(t, hook.id))[0]).toMatchObject({ delivery_status: 'pending', outcome: 'retrying' });
    t.clock.advance(1000);
    expect(await t.services.deliverer.drain()).toBe(1);
    expect(r.received).toHaveLength(4);
    expect(new Set(r.received.map((x) => x.headers['webhook-id'])).size).toBe(1);
    expect(new Webhook(hook.secret).verify(r.received[3]!.body, r.received[3]!.headers)).toMatchObject({ type: 'device.offline' });
    expect((await list(t, hook.id))[0]).toMatchObject({ delivery_status: 'delivered' });
    // A delivered one too: one more attempt.
    await call(t).post(path).expect(202);
    expect(await t.services.deliverer.drain()).toBe(1);
    expect(r.received).toHaveLength(5);
  });

  test("404 for another hook's or an unknown delivery; 409 while the hook is disabled or for a test", async () => {
    const t = await app();
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    await offline(t);
    await t.services.deliverer.drain();
    const [delivered] = await list(t, hook.id);
    await call(t).post(`/v1/hooks/${hook.id}/deliveries/dlv_999999/resend`).expect(404, { message: 'Delivery not found' });
    await call(t, keys.zoe).post(`/v1/hooks/${hook.id}/deliveries/${delivered!.delivery_id}/resend`).expect(404, { message: 'Hook not found' });
    await call(t).post(`/v1/hooks/${hook.id}/test`).expect(200);
    const [tested] = await list(t, hook.id);
    expect((await call(t).post(`/v1/hooks/${hook.id}/deliveries/${tested!.delivery_id}/resend`).expect(409)).body.message).toMatch(
      /test delivery is not resent/,
    );
    await call(t).patch(`/v1/hooks/${hook.id}`, { enabled: false }).expect(200);
    expect((await call(t).post(`/v1/hooks/${hook.id}/deliveries/${delivered!.delivery_id}/resend`).expect(409)).body.message).toMatch(/enable it first/);
  });
});

describe('POST /v1/hooks/{id}/recover', () => {
  test('dead deliveries in the range and events missed while disabled are queued, each once; a dry run changes nothing', async () => {
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    await offline(t);
    const deadAt = t.clock.now();
    await deadDelivery(t, r);
    await call(t).patch(`/v1/hooks/${hook.id}`, { enabled: false }).expect(200);
    t.clock.advance(60_000);
    await online(t);
    await call(t).patch(`/v1/hooks/${hook.id}`, { enabled: true }).expect(200);
    expect(await t.services.deliverer.drain()).toBe(0);

    const path = `/v1/hooks/${hook.id}/recover`;
    const since = new Date(deadAt).toISOString();
    expect((await call(t).post(path, { since, dry_run: true }).expect(200)).body).toEqual({ count: 2 });
    expect(
      (
        await call(t)
          .post(path, { since, until: new Date(deadAt + 1).toISOString(), dry_run: true })
          .expect(200)
      ).body,
    ).toEqual({ count: 1 });
    expect(
      (
        await call(t)
          .post(path, { since: new Date(deadAt + 1).toISOString(), dry_run: true })
          .expect(200)
      ).body,
    ).toEqual({ count: 1 });
    expect((await list(t, hook.id)).map((d) => d.delivery_status)).toEqual(['dead']);

    expect((await call(t).post(path, { since }).expect(202)).body).toEqual({ count: 2 });
    await t.services.hookOps.settled();
    expect((await call(t).post(path, { since }).expect(202)).body).toEqual({ count: 0 });
    expect(await t.services.deliverer.drain()).toBe(2);
    expect(
      r.received
        .slice(2)
        .map((x) => (JSON.parse(x.body) as { type: string }).type)
        .sort(),
    ).toEqual(['device.offline', 'device.online']);
    expect((await list(t, hook.id)).map((d) => d.delivery_status)).toEqual(['delivered', 'delivered']);
  });

  test("bad bodies are 400s; another key's hook is 404", async () => {
    const t = await app();
    const hook = await subscribe(t, (await receiver()).url);
    const path = `/v1/hooks/${hook.id}/recover`;
    const message = async (body: unknown) => (await call(t).post(path, body).expect(400)).body.message as string;
    expect(await message({})).toBe('since is required: a timestamp such as 2026-06-01T12:00:00Z');
    expect(await message({ since: 'last week' })).toBe('since must be a timestamp such as 2026-06-01T12:00:00Z');
    expect(await message({ since: '2026-06-02T00:00:00Z', until: '2026-06-01T00:00:00Z' })).toBe('until must be after since');
    expect(await message({ since: '2026-06-01T00:00:00Z', dry_run: 'yes' })).toBe('dry_run must be true or false');
    expect(await message({ since: '2026-06-01T00:00:00Z', all: true })).toBe('only since, until and dry_run may be given (not all)');
    await call(t, keys.zoe).post(path, { since: '2026-06-01T00:00:00Z' }).expect(404, { message: 'Hook not found' });
  });

  test('thousands of dead and missed deliveries: worked in slices, and two recovers at once make each delivery once', async () => {
    const t = await app();
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    const keyHash = hashKey(keys.ana);
    const now = t.clock.now();
    const n = 3000;
    // The log as a long outage left it: half the events' deliveries dead, half never made (the hook was disabled).
    const values = Array.from({ length: n }, (_, i) => i);
    for (let i = 0; i < n; i += 500) {
      const part = values.slice(i, i + 500);
      await t.all(
        `INSERT INTO events (id, key_hash, type, device_id, occurred_at, payload, created_at) VALUES ${part.map(() => '(?, ?, ?, ?, ?, ?, ?)').join(', ')}`,
        ...part.flatMap((k) => [
          `evt_bulk_${k}`,
          keyHash,
          'device.offline',
          dev01,
          formatMicros(now * 1000),
          JSON.stringify({ id: `evt_bulk_${k}`, type: 'device.offline' }),
          now + k,
        ]),
      );
    }
    await t.all(
      `INSERT INTO deliveries (hook_id, event_seq, webhook_id, status, attempts, next_attempt_at, created_at, fair_at, target_origin)
       SELECT ?, seq, 'msg_' || id, 'dead', 8, created_at, created_at, created_at, ? FROM events WHERE id LIKE 'evt_bulk_%' AND created_at < ?`,
      hook.id,
      new URL(r.url).origin,
      now + n / 2,
    );
    const body = { since: new Date(now).toISOString(), until: new Date(now + n).toISOString() };
    const { turns, result } = await turnsDuring(() => t.services.hookOps.recover(keyHash, hook.id, { since: now, until: now + n }, true));
    expect(result).toBe(n);
    // One slice of at most 500 rows at a time, a turn for other work between slices.
    expect(turns).toBeGreaterThanOrEqual((n / 2 + n) / 500);

    const [a, b] = await Promise.all([call(t).post(`/v1/hooks/${hook.id}/recover`, body), call(t).post(`/v1/hooks/${hook.id}/recover`, body)]);
    expect([a.status, b.status]).toEqual([202, 202]);
    await t.services.hookOps.settled();
    expect(Number(await t.value("SELECT count(*) FROM deliveries WHERE hook_id = ? AND status = 'pending'", hook.id))).toBe(n);
    expect(Number(await t.value('SELECT count(*) FROM deliveries WHERE hook_id = ?', hook.id))).toBe(n);
    expect(
      (
        await call(t)
          .post(`/v1/hooks/${hook.id}/recover`, { ...body, dry_run: true })
          .expect(200)
      ).body,
    ).toEqual({ count: 0 });
    const metrics = await request(t.app).get('/metrics').expect(200);
    expect(metrics.text).toMatch(/^webhook_recovers_total\{mode="run"\} 2$/m);
    expect(metrics.text).toMatch(new RegExp(`^webhook_recovered_deliveries_total ${n}$`, 'm'));
  });
});

import { describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { hookCalls, hookKit } from '../helpers/hook-kit.js';
import { keys } from '../fixtures/catalog.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { hashKey } from '../../src/auth/keys.js';

// docs/webhooks.md, "When something goes wrong": PATCH (pause, resume, change), send a test,
// rotate the secret. Ana's only online device is 01; it goes offline once the 5-minute
// heartbeat timeout passes. Clocks start 5 minutes before the real time, so a delivery's
// webhook-timestamp is current for the standardwebhooks package's own clock check.
const dev01 = 'a4:83:e7:1f:2b:01';
const timeoutMs = 300_000;

interface Hook {
  id: string;
  secret: string;
  status: string;
  status_reason: string | null;
  events: string[];
  device_ids: string[] | null;
}

const { app, receiver, cleanups } = hookKit(timeoutMs);
const call = hookCalls;

async function subscribe(t: TestApp, url: string, extra: Record<string, unknown> = {}): Promise<Hook> {
  return (
    await call(t)
      .post('/v1/hooks', { target_url: url, ...extra })
      .expect(201)
  ).body as Hook;
}

const deliveries = async (t: TestApp, hookId: string) =>
  (await call(t).get(`/v1/hooks/${hookId}/deliveries`).expect(200)).body as Array<{ delivery_id: string; delivery_status: string; event_type: string }>;

/** Lets device 01 time out and polls: one device.offline event. */
async function offline(t: TestApp): Promise<void> {
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);
}

/** Device 01 sends a heartbeat now and a poll sees it: one device.online event. */
async function online(t: TestApp): Promise<void> {
  await t.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', formatMicros(t.clock.now() * 1000), dev01);
  expect((await pollDue(t)).events).toBe(1);
}

describe('PATCH /v1/hooks/{id}', () => {
  test("bad bodies are 400s that say what is wrong; another key's hook is 404", async () => {
    const t = await app();
    const hook = await subscribe(t, (await receiver()).url);
    const path = `/v1/hooks/${hook.id}`;
    const message = async (body: unknown) => (await call(t).patch(path, body).expect(400)).body.message as string;
    expect(await message({})).toBe('body must give at least one of events, device_ids, enabled');
    expect(await message({ target_url: 'https://example.com/x' })).toMatch(/^only events, device_ids and enabled can be changed \(not target_url\)/);
    expect(await message({ events: ['device.gone'] })).toBe('events must list device.offline, device.online, hook.disabled and/or delivery.dead');
    expect(await message({ events: [] })).toBe('events must not be empty');
    expect(await message({ enabled: 'no' })).toBe('enabled must be true or false');
    expect(await message({ device_ids: [] })).toBe('device_ids must not be empty (use null for every device)');
    await call(t, keys.zoe).patch(path, { enabled: false }).expect(404, { message: 'Hook not found' });
    await call(t).patch('/v1/hooks/hook_nope', { enabled: false }).expect(404, { message: 'Hook not found' });
  });

  test('events and device_ids change what is delivered; the same subscription twice is a 409', async () => {
    const t = await app();
    const r = await receiver();
    const offlineOnly = await subscribe(t, r.url, { events: ['device.offline'] });
    const onlineOnly = await subscribe(t, r.url, { events: ['device.online'] });
    const conflict = await call(t)
      .patch(`/v1/hooks/${onlineOnly.id}`, { events: ['device.offline'] })
      .expect(409);
    expect(conflict.body.message).toContain(offlineOnly.id);
    const changed = (
      await call(t)
        .patch(`/v1/hooks/${onlineOnly.id}`, { events: ['device.online', 'device.offline'], device_ids: [dev01.toUpperCase()] })
        .expect(200)
    ).body as Hook;
    expect(changed).toMatchObject({ events: ['device.offline', 'device.online'], device_ids: [dev01], status: 'active' });
    // Subscribing to what the hook now is finds it (subscribing stays idempotent).
    const again = await call(t)
      .post('/v1/hooks', { target_url: r.url, device_ids: [dev01] })
      .expect(200);
    expect(again.body.id).toBe(onlineOnly.id);
    await offline(t);
    expect(await t.services.deliverer.drain()).toBe(2);
  });

  test('disabled: pending deliveries are held, new events make none; enabled: the held ones are sent', async () => {
    const t = await app();
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    await offline(t);
    const paused = (await call(t).patch(`/v1/hooks/${hook.id}`, { enabled: false }).expect(200)).body as Hook;
    expect(paused.status).toBe('disabled');
    expect(paused.status_reason).toMatch(/key's owner/);
    expect((await deliveries(t, hook.id)).map((d) => d.delivery_status)).toEqual(['held']);
    expect((await call(t).get(`/v1/hooks/${hook.id}/deliveries?status=held`).expect(200)).body).toHaveLength(1);
    expect((await call(t).get(`/v1/hooks/${hook.id}/deliveries?status=pending`).expect(200)).body).toHaveLength(0);
    t.clock.advance(60_000);
    expect(await t.services.deliverer.drain()).toBe(0);
    // The key stays watched: the next change is logged, but no delivery is made for it.
    await online(t);
    expect(await deliveries(t, hook.id)).toHaveLength(1);
    expect(await t.services.deliverer.drain()).toBe(0);
    expect(r.received).toHaveLength(0);

    const resumed = (await call(t).patch(`/v1/hooks/${hook.id}`, { enabled: true }).expect(200)).body as Hook;
    expect(resumed).toMatchObject({ status: 'active', status_reason: null });
    expect(await t.services.deliverer.drain()).toBe(1);
    expect(r.received.map((x) => (JSON.parse(x.body) as { type: string }).type)).toEqual(['device.offline']);
    expect((await deliveries(t, hook.id)).map((d) => d.delivery_status)).toEqual(['delivered']);
  });

  test('a hook disabled by a 410 can be enabled again and gets the next event', async () => {
    const t = await app();
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    await offline(t);
    r.respondWith({ status: 410 });
    await t.services.deliverer.drain();
    expect((await call(t).get(`/v1/hooks/${hook.id}`).expect(200)).body).toMatchObject({ status: 'disabled', status_reason: 'The receiver answered 410 Gone' });
    await call(t).patch(`/v1/hooks/${hook.id}`, { enabled: true }).expect(200);
    await online(t);
    expect(await t.services.deliverer.drain()).toBe(1);
    expect(r.received).toHaveLength(2);
  });

  test('enabling past WEBHOOK_MAX_HOOKS_PER_KEY is a 409 naming the limit', async () => {
    const t = await app({ WEBHOOK_MAX_HOOKS_PER_KEY: '1' });
    const r = await receiver();
    const first = await subscribe(t, r.url, { events: ['device.offline'] });
    await call(t).patch(`/v1/hooks/${first.id}`, { enabled: false }).expect(200);
    await subscribe(t, r.url, { events: ['device.online'] });
    const refused = await call(t).patch(`/v1/hooks/${first.id}`, { enabled: true }).expect(409);
    expect(refused.body.message).toContain('WEBHOOK_MAX_HOOKS_PER_KEY');
    expect((await call(t).get(`/v1/hooks/${first.id}`).expect(200)).body.status).toBe('disabled');
  });
});

/** A receiver that answers `status` with a body of `size` bytes ("é" is two). */
async function talkingReceiver(status: number, size: number): Promise<{ url: string; bodies: string[]; headers: Array<Record<string, string>> }> {
  const bodies: string[] = [];
  const headers: Array<Record<string, string>> = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      headers.push(req.headers as Record<string, string>);
      res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' }).end('é'.repeat(size / 2));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, bodies, headers };
}

describe('POST /v1/hooks/{id}/test', () => {
  test('one signed webhook.test delivery now; its outcome in the answer and, with its attempt, in the deliveries', async () => {
    const t = await app();
    const r = await talkingReceiver(200, 3000);
    const hook = await subscribe(t, r.url);
    // The real time, for the library's check of webhook-timestamp.
    t.clock.advance(timeoutMs);
    const res = await call(t).post(`/v1/hooks/${hook.id}/test`).expect(200);
    expect(res.body).toEqual({ delivered: true, status_code: 200, duration_ms: expect.any(Number), error: null });
    expect(r.bodies).toHaveLength(1);
    const payload = new Webhook(hook.secret).verify(r.bodies[0]!, r.headers[0]!) as { type: string; data: { type: string; data: { hook_id: string } } };
    expect(payload).toMatchObject({ type: 'webhook.test', data: { type: 'webhook.test', data: { hook_id: hook.id } } });

    const [listed] = await deliveries(t, hook.id);
    expect(listed).toMatchObject({ event_type: 'webhook.test', delivery_status: 'delivered' });
    const detail = (await call(t).get(`/v1/hooks/${hook.id}/deliveries/${listed!.delivery_id}`).expect(200)).body;
    const [attempt] = detail.attempts as Array<{ request_headers: Record<string, string>; response_body: string; status_code: number }>;
    expect(attempt!.status_code).toBe(200);
    expect(attempt!.request_headers['webhook-signature']).toBe(r.headers[0]!['webhook-signature']);
    expect(attempt!.request_headers['webhook-id']).toBe(r.headers[0]!['webhook-id']);
    expect(JSON.stringify(attempt!.request_headers)).not.toContain(hook.secret.slice(6));
    expect(attempt!.response_body).toBe('é'.repeat(512));
    // Not in the device events, nor in the polling trigger.
    expect((await call(t).get('/v1/events').expect(200)).body).toEqual([]);
    expect((await call(t).get('/v1/triggers/device-status').expect(200)).body).toEqual([]);
  });

  test('a failing receiver: delivered false with its status, shown as failed, never retried', async () => {
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const r = await talkingReceiver(500, 10);
    const hook = await subscribe(t, r.url);
    expect((await call(t).post(`/v1/hooks/${hook.id}/test`).expect(200)).body).toMatchObject({ delivered: false, status_code: 500, error: null });
    t.clock.advance(60_000);
    expect(await t.services.deliverer.drain()).toBe(0);
    expect((await deliveries(t, hook.id)).map((d) => d.delivery_status)).toEqual(['failed']);
    const recovered = await call(t).post(`/v1/hooks/${hook.id}/recover`, { since: '2000-01-01T00:00:00Z', dry_run: true }).expect(200);
    expect(recovered.body).toEqual({ count: 0 });
  });

  test("no answer: status_code null and the error; another key's hook is 404", async () => {
    const t = await app({ WEBHOOK_TIMEOUT_MS: '2000' });
    const closed = await receiver();
    const url = closed.url;
    await closed.stop();
    cleanups.pop();
    const hook = await subscribe(t, url);
    const res = await call(t).post(`/v1/hooks/${hook.id}/test`).expect(200);
    expect(res.body).toMatchObject({ delivered: false, status_code: null });
    expect(res.body.error).toMatch(/ECONNREFUSED/);
    await call(t, keys.zoe).post(`/v1/hooks/${hook.id}/test`).expect(404, { message: 'Hook not found' });
  });
});

test('the target rules apply to a test as to every delivery: a private target is refused, nothing sent', async () => {
  const t = await app({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
  const r = await receiver();
  // Stored directly (as if the target changed after subscribing): the HTTP API would refuse it.
  const { hook } = await t.services.hooks.create(hashKey(keys.ana), { target_url: r.url, events: ['device.offline'], device_ids: null });
  const res = await call(t).post(`/v1/hooks/${hook.id}/test`).expect(200);
  expect(res.body).toMatchObject({ delivered: false, status_code: null });
  expect(res.body.error).toMatch(/https|loopback/);
  expect(r.received).toHaveLength(0);
});

describe('POST /v1/hooks/{id}/secret/rotate', () => {
  test('both signatures during the overlap (either secret verifies), then only the new one', async () => {
    const t = await app({ WEBHOOK_SECRET_OVERLAP_MS: '60000' });
    const r = await receiver();
    const hook = await subscribe(t, r.url);
    await offline(t);
    const rotated = (await call(t).post(`/v1/hooks/${hook.id}/secret/rotate`).expect(200)).body as { secret: string };
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.secret).not.toBe(hook.secret);
    await t.services.deliverer.drain();
    const during = r.received[0]!;
    expect(during.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(new Webhook(rotated.secret).verify(during.body, during.headers)).toMatchObject({ type: 'device.offline' });
    expect(new Webhook(hook.secret).verify(during.body, during.headers)).toMatchObject({ type: 'device.offline' });

    t.clock.advance(60_000);
    await online(t);
    await t.services.deliverer.drain();
    const after = r.received[1]!;
    expect(after.headers['webhook-signature']!.split(' ')).toHaveLength(1);
    expect(new Webhook(rotated.secret).verify(after.body, after.headers)).toMatchObject({ type: 'device.online' });
    expect(() => new Webhook(hook.secret).verify(after.body, after.headers)).toThrow();
  });

  test("a given secret is used; a bad one or another field is a 400; another key's hook is 404", async () => {
    const t = await app();
    const hook = await subscribe(t, (await receiver()).url);
    const path = `/v1/hooks/${hook.id}/secret/rotate`;
    const mine = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
    expect((await call(t).post(path, { secret: mine }).expect(200)).body).toEqual({ secret: mine });
    expect((await call(t).post(path, { secret: 'hunter2' }).expect(400)).body.message).toBe('secret must be whsec_ followed by base64');
    expect((await call(t).post(path, { secret: 'whsec_AAAA' }).expect(400)).body.message).toMatch(/^secret must encode 24 to 64 bytes/);
    expect((await call(t).post(path, { key: 1 }).expect(400)).body.message).toBe('only secret may be given (not key)');
    await call(t, keys.zoe).post(path).expect(404, { message: 'Hook not found' });
    // Subscribing again answers the hook with its current secret.
    const again = await call(t)
      .post('/v1/hooks', { target_url: (await call(t).get(`/v1/hooks/${hook.id}`)).body.target_url })
      .expect(200);
    expect(again.body.secret).toBe(mine);
  });
});

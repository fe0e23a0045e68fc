import { afterEach, describe, expect, test } from '@jest/globals';
import { verifiedKeyTtlMs } from '../../src/auth/embedded-keys.js';
import { createServer, type Server } from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { Receiver, type Received } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { hashKey } from '../../src/auth/keys.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { verify, type SignedHeaders } from '../../src/webhooks/signing.js';

// Embedded mode, docs/webhooks.md. Ana's key has every scope; her only online device is 01
// (heartbeat 30 s before the start clock). The default heartbeat timeout is 5 minutes.
// Clocks start 5 minutes before the real time so that, once a device has timed out, the
// webhook-timestamp is current for the standardwebhooks package's own clock check.
const dev01 = 'a4:83:e7:1f:2b:01';
const dev03 = 'a4:83:e7:1f:2b:03';
const dev05 = 'a4:83:e7:1f:2b:05';
const timeoutMs = 300_000;
const secretPattern = /^whsec_[A-Za-z0-9+/]{43}=$/;
const connectorSecret = 'ab'.repeat(32);

interface Hook {
  id: string;
  target_url: string;
  events: string[];
  device_ids: string[] | null;
  secret: string;
  status: string;
  created_at: string;
}

interface Attempt {
  event_id: string;
  webhook_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: string;
  next_attempt_at: string | null;
  outcome: string;
  delivery_status: string;
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function app(env: Record<string, string> = {}, options: { clock?: ManualClock; databasePath?: string; dataset?: boolean } = {}): Promise<TestApp> {
  const t = await buildTestApp({
    clock: options.clock ?? new ManualClock(Date.now() - timeoutMs),
    dataset: options.dataset === false ? undefined : catalog(),
    databasePath: options.databasePath,
    // PostgreSQL: a named database (schema) outlives its app, so a "restarted" app finds the
    // same data; setup-postgres drops it after the file.
    keep: options.databasePath !== undefined,
    // A poll moves the clock on to when the key is due (pollDue): at most this interval, well
    // within the retry delays the tests count on.
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', POLL_INTERVAL_MS: '200', ...env },
  });
  let closed = false;
  const close = t.close.bind(t);
  t.close = async () => {
    if (closed) return;
    closed = true;
    await close();
  };
  cleanups.push(() => t.close());
  return t;
}

async function receiver(path?: string): Promise<Receiver> {
  const r = await new Receiver().start(path);
  cleanups.push(() => r.stop());
  return r;
}

const api = (t: TestApp, key: string = keys.ana) => ({
  post: (body: unknown) =>
    request(t.app)
      .post('/v1/hooks')
      .set('X-API-Key', key)
      .send(body as object),
  get: (path: string) => request(t.app).get(path).set('X-API-Key', key),
  del: (path: string) => request(t.app).delete(path).set('X-API-Key', key),
});

async function subscribe(t: TestApp, body: Record<string, unknown>, key: string = keys.ana): Promise<Hook> {
  const res = await api(t, key).post(body).expect(201);
  return res.body as Hook;
}

/** Every attempt of the hook's deliveries, newest first: each delivery's detail, flattened. */
async function attempts(t: TestApp, hookId: string, key: string = keys.ana): Promise<Attempt[]> {
  const list = (await api(t, key).get(`/v1/hooks/${hookId}/deliveries`).expect(200)).body as Array<
    Pick<Attempt, 'event_id' | 'webhook_id' | 'delivery_status'> & { delivery_id: string }
  >;
  const out: Attempt[] = [];
  for (const d of list) {
    const detail = (await api(t, key).get(`/v1/hooks/${hookId}/deliveries/${d.delivery_id}`).expect(200)).body as { attempts: Attempt[] };
    for (const a of [...detail.attempts].reverse()) out.push({ ...a, event_id: d.event_id, webhook_id: d.webhook_id, delivery_status: d.delivery_status });
  }
  return out;
}

/** Lets device 01 time out and polls: one device.offline event. */
async function deviceOffline(t: TestApp, expected = 1): Promise<void> {
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(expected);
}

/** A fresh heartbeat for a device (now, with microseconds) and a poll. */
async function heartbeat(t: TestApp, deviceId: string): Promise<string> {
  const text = formatMicros(t.clock.now() * 1000 + 789);
  await t.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', text, deviceId);
  await pollDue(t);
  return text;
}

const parsed = (r: Received) =>
  JSON.parse(r.body) as { type: string; timestamp: string; data: { id: string; type: string; occurred_at: string; device: { id: string } } };
const headersOf = (r: Received): SignedHeaders => ({
  'webhook-id': r.headers['webhook-id']!,
  'webhook-timestamp': r.headers['webhook-timestamp']!,
  'webhook-signature': r.headers['webhook-signature']!,
});

describe('POST /v1/hooks', () => {
  test('201 with id, target_url, events (both by default), device_ids, secret, status and created_at', async () => {
    const t = await app();
    const r = await receiver();
    const res = await api(t).post({ target_url: r.url }).expect(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['created_at', 'device_ids', 'events', 'id', 'secret', 'status', 'target_url']);
    expect(res.body).toMatchObject({
      target_url: r.url,
      events: ['device.offline', 'device.online'],
      device_ids: null,
      status: 'active',
      created_at: formatMicros(t.clock.now() * 1000),
    });
    expect(res.body.id).toEqual(expect.any(String));
    expect(res.body.secret).toMatch(secretPattern);
    expect(Buffer.from(res.body.secret.slice(6), 'base64')).toHaveLength(32);
  });

  test('the same key + URL + events + device ids again → 200 with the same hook', async () => {
    const t = await app();
    const r = await receiver();
    const first = await subscribe(t, { target_url: r.url, events: ['device.offline', 'device.online'], device_ids: [dev01, dev05] });
    expect(first.device_ids).toEqual([dev01, dev05]);
    const again = await api(t)
      .post({ target_url: r.url, events: ['device.online', 'device.offline'], device_ids: [dev05, dev01.toUpperCase()] })
      .expect(200);
    expect(again.body).toEqual(first);
    const defaults = await subscribe(t, { target_url: r.url });
    expect(defaults.id).not.toBe(first.id);
    expect(
      (
        await api(t)
          .post({ target_url: r.url, events: ['device.offline', 'device.online'] })
          .expect(200)
      ).body.id,
    ).toBe(defaults.id);
    expect((await api(t).post({ target_url: r.url, device_ids: null }).expect(200)).body.id).toBe(defaults.id);
  });

  test('different events, device ids, URL or key → a new hook with its own secret', async () => {
    const t = await app();
    const r = await receiver();
    const base = await subscribe(t, { target_url: r.url });
    const offlineOnly = await subscribe(t, { target_url: r.url, events: ['device.offline'] });
    const oneDevice = await subscribe(t, { target_url: r.url, device_ids: [dev01] });
    const otherUrl = await subscribe(t, { target_url: `${r.url}?tenant=2` });
    const zoe = await subscribe(t, { target_url: r.url }, keys.zoe);
    const all = [base, offlineOnly, oneDevice, otherUrl, zoe];
    expect(new Set(all.map((h) => h.id)).size).toBe(5);
    expect(new Set(all.map((h) => h.secret)).size).toBe(5);
    expect(offlineOnly.events).toEqual(['device.offline']);
  });

  test('needs hooks:write, and device:read as well', async () => {
    const t = await app();
    const r = await receiver();
    // Ben has device:read and menu:read only.
    await api(t, keys.ben)
      .post({ target_url: r.url })
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs hooks:write' }] });
    await api(t, keys.anaMenuOnly)
      .post({ target_url: r.url })
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs hooks:write' }] });
    await api(t, keys.anaNoScopes)
      .post({ target_url: r.url })
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs hooks:write' }] });
    const hooksOnly = 'sk_test_ana_hooks_only_000000000';
    await t.all(
      `INSERT INTO api_keys (id, user_id, name, key_sha256, scopes, created_at) VALUES ('key_hooks', 'usr_ana', 'Hooks only', ?, '["hooks:write"]', '2026-01-01T00:00:00.000000Z')`,
      hashKey(hooksOnly),
    );
    await api(t, hooksOnly)
      .post({ target_url: r.url })
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
    await request(t.app).post('/v1/hooks').send({ target_url: r.url }).expect(401, { message: 'Missing API key' });
    expect(await t.value('SELECT count(*) FROM hooks')).toBe(0);
  });

  test('accepts Authorization: Bearer', async () => {
    const t = await app();
    const r = await receiver();
    const res = await request(t.app).post('/v1/hooks').set('Authorization', `Bearer ${keys.ana}`).send({ target_url: r.url }).expect(201);
    await request(t.app).get(`/v1/hooks/${res.body.id}`).set('Authorization', `Bearer ${keys.ana}`).expect(200);
  });

  test.each([
    ['missing target_url', {}, 'target_url'],
    ['target_url not a string', { target_url: 123 }, 'target_url'],
    ['target_url empty', { target_url: '' }, 'target_url'],
    ['target_url not a URL', { target_url: 'not a url' }, 'target_url'],
    ['an unknown events value', { target_url: 'http://127.0.0.1:9/h', events: ['device.offline', 'device.exploded'] }, 'events[1]'],
    ['empty events', { target_url: 'http://127.0.0.1:9/h', events: [] }, 'events'],
    ['events not an array', { target_url: 'http://127.0.0.1:9/h', events: 'device.offline' }, 'events'],
    ['device_ids not an array', { target_url: 'http://127.0.0.1:9/h', device_ids: dev01 }, 'device_ids'],
    ['device_ids with a non-string', { target_url: 'http://127.0.0.1:9/h', device_ids: [dev01, 7] }, 'device_ids[1]'],
    ['empty device_ids', { target_url: 'http://127.0.0.1:9/h', device_ids: [] }, 'device_ids'],
  ])('%s → 400 naming the JSON path', async (_name, body, path) => {
    const t = await app();
    const res = await api(t).post(body).expect(400);
    expect(res.body.message).toEqual(expect.any(String));
    expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path, message: expect.any(String) })]));
    expect(await t.value('SELECT count(*) FROM hooks')).toBe(0);
  });

  test('a body that is not JSON → 400', async () => {
    const t = await app();
    const res = await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).set('Content-Type', 'application/json').send('{"target_url":').expect(400);
    expect(res.body).toEqual({ message: expect.stringMatching(/JSON/) });
    const array = await api(t).post([]).expect(400);
    expect(array.body.details).toEqual(expect.any(Array));
  });

  describe('a body that cannot be used gets a message that says why', () => {
    const raw = (t: TestApp, type?: string) => {
      const req = request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana);
      return type ? req.set('Content-Type', type) : req;
    };
    const nothingStored = async (t: TestApp) => expect(await t.value('SELECT count(*) FROM hooks')).toBe(0);

    test('a gzip body that is not gzip → 400 naming the Content-Encoding; a real gzip body works', async () => {
      const t = await app();
      const r = await receiver();
      const res = await raw(t, 'application/json').set('Content-Encoding', 'gzip').send('{"target_url":"x"}').expect(400);
      expect(res.body).toEqual({ message: 'Request body is not valid for its Content-Encoding "gzip"' });
      await nothingStored(t);
      // The bytes as they are: superagent would otherwise JSON-serialise a Buffer.
      const gzipped = gzipSync(JSON.stringify({ target_url: r.url }));
      await raw(t, 'application/json')
        .set('Content-Encoding', 'gzip')
        .serialize((body: unknown) => body as string)
        .send(gzipped)
        .expect(201);
    });

    test('an unsupported Content-Encoding or charset → 415 naming it', async () => {
      const t = await app();
      const compress = await raw(t, 'application/json').set('Content-Encoding', 'compress').send('{}').expect(415);
      expect(compress.body).toEqual({ message: 'Content-Encoding "compress" is not supported: use gzip, deflate, br or identity' });
      const latin1 = await raw(t, 'application/json; charset=latin1').send('{}').expect(415);
      expect(latin1.body).toEqual({ message: 'Content-Type charset "latin1" is not supported: use utf-8' });
      await nothingStored(t);
    });

    test.each(['42', 'null', 'true', '"https://hooks.example.com"', '[]'])('JSON %s → 400 body must be a JSON object', async (text) => {
      const t = await app();
      const res = await raw(t, 'application/json').send(text).expect(400);
      expect(res.body).toEqual({ message: 'body must be a JSON object', details: [{ path: '$', message: 'body must be a JSON object' }] });
      await nothingStored(t);
    });

    test('no body at all → 400 body must be a JSON object', async () => {
      const t = await app();
      expect((await raw(t).expect(400)).body.message).toBe('body must be a JSON object');
    });

    test.each([
      ['text/plain', '{"target_url":"https://hooks.example.com/in"}'],
      ['application/x-www-form-urlencoded', 'target_url=https%3A%2F%2Fhooks.example.com%2Fin'],
      ['application/xml', '<hook/>'],
    ])('Content-Type %s → 415 Content-Type must be application/json', async (type, text) => {
      const t = await app();
      await raw(t, type).send(text).expect(415, { message: 'Content-Type must be application/json' });
      await nothingStored(t);
    });

    test('five events → the maxItems message; a repeated event type → its own message', async () => {
      const t = await app();
      const r = await receiver();
      const five = await api(t)
        .post({ target_url: r.url, events: ['device.offline', 'device.online', 'hook.disabled', 'delivery.dead', 'device.offline'] })
        .expect(400);
      expect(five.body).toEqual({
        message: 'events must list at most 4 event types',
        details: [{ path: 'events', message: 'events must list at most 4 event types' }],
      });
      const twice = await api(t)
        .post({ target_url: r.url, events: ['device.online', 'device.online'] })
        .expect(400);
      expect(twice.body.message).toBe('events must not repeat an event type');
      await nothingStored(t);
    });
  });

  describe('target URL guard (WEBHOOK_ALLOW_PRIVATE_TARGETS=false)', () => {
    test.each([
      'http://hooks.example.com/in',
      'http://127.0.0.1:8080/hook',
      'https://127.0.0.1/hook',
      'https://127.0.0.1:8443/hook',
      'https://10.0.0.5/hook',
      'https://169.254.169.254/latest',
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/',
      'https://[fd12::1]/hook',
      'https://localhost/',
      'https://api.localhost/hook',
      'https://user:pass@hooks.example.com/in',
      'ftp://hooks.example.com/in',
    ])('%s → 400 naming target_url, nothing stored', async (url) => {
      const t = await app({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' });
      const res = await api(t).post({ target_url: url }).expect(400);
      expect(res.body.details).toEqual([expect.objectContaining({ path: 'target_url' })]);
      expect(res.body.message).toMatch(/target_url/);
      await api(t).get('/v1/hooks').expect(200, []);
    });
  });
});

describe('GET and DELETE /v1/hooks', () => {
  test('list and one have no secret; DELETE → 204, then 404', async () => {
    const t = await app();
    const r = await receiver();
    const a = await subscribe(t, { target_url: r.url });
    const b = await subscribe(t, { target_url: r.url, events: ['device.online'], device_ids: [dev03] });
    const list = (await api(t).get('/v1/hooks').expect(200)).body as Array<Record<string, unknown>>;
    expect(list.map((h) => h.id).sort()).toEqual([a.id, b.id].sort());
    for (const hook of list) expect(hook).not.toHaveProperty('secret');
    const one = (await api(t).get(`/v1/hooks/${b.id}`).expect(200)).body as Record<string, unknown>;
    expect(one).not.toHaveProperty('secret');
    const { secret: _secret, ...shown } = b;
    expect(one).toMatchObject(shown);
    expect(JSON.stringify(list)).not.toContain(a.secret.slice(6));

    await api(t).del(`/v1/hooks/${a.id}`).expect(204, '');
    await api(t).get(`/v1/hooks/${a.id}`).expect(404, { message: 'Hook not found' });
    await api(t).del(`/v1/hooks/${a.id}`).expect(404, { message: 'Hook not found' });
    await api(t).get(`/v1/hooks/${a.id}/deliveries`).expect(404, { message: 'Hook not found' });
    expect(((await api(t).get('/v1/hooks').expect(200)).body as Hook[]).map((h) => h.id)).toEqual([b.id]);
  });

  test("another key's hook is 404 Hook not found on GET, DELETE and deliveries, and stays", async () => {
    const t = await app();
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    const zoe = api(t, keys.zoe);
    await zoe.get(`/v1/hooks/${hook.id}`).expect(404, { message: 'Hook not found' });
    await zoe.del(`/v1/hooks/${hook.id}`).expect(404, { message: 'Hook not found' });
    await zoe.get(`/v1/hooks/${hook.id}/deliveries`).expect(404, { message: 'Hook not found' });
    await zoe.get('/v1/hooks').expect(200, []);
    await api(t).get(`/v1/hooks/${hook.id}`).expect(200);
    await api(t).get('/v1/hooks/hook_doesnotexist').expect(404, { message: 'Hook not found' });
  });

  test('deleting a hook while its delivery is in flight: the round still completes, nothing is recorded', async () => {
    const t = await app();
    const r = await receiver();
    const other = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    const kept = await subscribe(t, { target_url: other.url });
    await deviceOffline(t);
    r.respondWith({ status: 204, delayMs: 150 });
    other.respondWith({ status: 204, delayMs: 150 });
    const round = t.services.deliverer.drain();
    while (r.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await api(t).del(`/v1/hooks/${hook.id}`).expect(204);
    await expect(round).resolves.toBe(2);
    expect((await attempts(t, kept.id)).map((a) => a.outcome)).toEqual(['delivered']);
    expect(await t.value('SELECT count(*) FROM delivery_attempts WHERE hook_id = ?', hook.id)).toBe(0);
    expect(await t.services.deliverer.drain()).toBe(0);
  });

  test('DELETE needs hooks:write', async () => {
    const t = await app();
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    await api(t, keys.ben)
      .del(`/v1/hooks/${hook.id}`)
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs hooks:write' }] });
    await request(t.app).delete(`/v1/hooks/${hook.id}`).expect(401, { message: 'Missing API key' });
    await api(t).get(`/v1/hooks/${hook.id}`).expect(200);
  });

  test('a deleted hook gets nothing more, even what was queued for it', async () => {
    const t = await app();
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    await deviceOffline(t);
    await api(t).del(`/v1/hooks/${hook.id}`).expect(204);
    expect(await t.services.deliverer.drain()).toBe(0);
    expect(r.received).toHaveLength(0);
  });
});

describe('delivery', () => {
  test('offline → one signed webhook the standardwebhooks package verifies; online → another; baseline → nothing', async () => {
    const t = await app();
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    // The subscription recorded the baseline: offline devices there emit nothing.
    expect((await pollDue(t)).events).toBe(0);
    expect(await t.services.deliverer.drain()).toBe(0);
    expect(r.received).toHaveLength(0);

    await deviceOffline(t);
    expect(await t.services.deliverer.drain()).toBe(1);
    expect(r.received).toHaveLength(1);
    const first = r.received[0]!;
    const payload = new Webhook(hook.secret).verify(first.body, first.headers);
    const [event] = (await api(t).get('/v1/triggers/device-status').expect(200)).body as Array<{ id: string; occurred_at: string }>;
    expect(payload).toEqual({ type: 'device.offline', timestamp: event!.occurred_at, data: event });
    expect(Object.keys(JSON.parse(first.body) as object)).toEqual(['type', 'timestamp', 'data']);
    expect(first.headers['content-type']).toMatch(/^application\/json/);
    expect(first.headers['webhook-id']).toEqual(expect.any(String));
    expect(first.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock.now() / 1000)));
    expect(first.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(verify(hook.secret, headersOf(first), first.body, Math.floor(t.clock.now() / 1000))).toBe(true);
    // Not verifiable under another secret.
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(first.body, first.headers)).toThrow();

    // Nothing more for the same transition.
    expect((await pollDue(t)).events).toBe(0);
    expect(await t.services.deliverer.drain()).toBe(0);

    t.clock.advance(10_000);
    const hb = await heartbeat(t, dev01);
    await t.services.deliverer.drain();
    expect(r.received).toHaveLength(2);
    const second = new Webhook(hook.secret).verify(r.received[1]!.body, r.received[1]!.headers) as ReturnType<typeof parsed>;
    expect(second).toMatchObject({ type: 'device.online', timestamp: hb, data: { type: 'device.online', occurred_at: hb, device: { id: dev01 } } });
    expect(r.received[1]!.headers['webhook-id']).not.toBe(first.headers['webhook-id']);

    const log = await attempts(t, hook.id);
    expect(log.map((a) => [a.attempt, a.status_code, a.outcome, a.delivery_status])).toEqual([
      [1, 204, 'delivered', 'delivered'],
      [1, 204, 'delivered', 'delivered'],
    ]);
    expect(log[1]!.event_id).toBe(event!.id);
  });

  test("the hook's device_ids and events filters are respected", async () => {
    const t = await app();
    const [ra, rb, rc] = [await receiver(), await receiver(), await receiver()];
    // Device 05 is online at the baseline too (heartbeat 10 s ago).
    await t.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', formatMicros((t.clock.now() - 10_000) * 1000), dev05);
    const a = await subscribe(t, { target_url: ra.url, events: ['device.offline'], device_ids: [dev01.toUpperCase()] });
    const b = await subscribe(t, { target_url: rb.url, device_ids: [dev05] });
    await subscribe(t, { target_url: rc.url, events: ['device.online'] });
    await deviceOffline(t, 2);
    await t.services.deliverer.drain();
    expect(ra.received.map((x) => [parsed(x).type, parsed(x).data.device.id])).toEqual([['device.offline', dev01]]);
    expect(rb.received.map((x) => [parsed(x).type, parsed(x).data.device.id])).toEqual([['device.offline', dev05]]);
    expect(rc.received).toHaveLength(0);

    await heartbeat(t, dev01);
    await t.services.deliverer.drain();
    expect(ra.received).toHaveLength(1);
    expect(rb.received).toHaveLength(1);
    expect(rc.received.map((x) => [parsed(x).type, parsed(x).data.device.id])).toEqual([['device.online', dev01]]);
    expect(ra.received[0]!.headers['webhook-id']).toContain(a.id.replace(/^hook_/, ''));
    expect(rb.received[0]!.headers['webhook-id']).toContain(b.id.replace(/^hook_/, ''));
  });

  test('500 three times, then 204: delivered once, the same webhook-id on all 4 attempts, each at its time', async () => {
    const schedule = [1000, 2000, 3000, 4000];
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: schedule.join(',') });
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    await deviceOffline(t);
    r.respondWith({ status: 500 }, { status: 500 }, { status: 500 });
    const sentAt: number[] = [];
    expect(await t.services.deliverer.drain()).toBe(1);
    sentAt.push(t.clock.now());
    for (let i = 0; i < 3; i += 1) {
      // Not before its next attempt time.
      expect(await t.services.deliverer.drain()).toBe(0);
      t.clock.advance(schedule[i]! - 1);
      expect(await t.services.deliverer.drain()).toBe(0);
      expect(r.received).toHaveLength(i + 1);
      t.clock.advance(1);
      expect(await t.services.deliverer.drain()).toBe(1);
      sentAt.push(t.clock.now());
      expect(r.received).toHaveLength(i + 2);
    }
    // Delivered: never sent again.
    t.clock.advance(86_400_000);
    expect(await t.services.deliverer.drain()).toBe(0);
    await pollDue(t);
    expect(await t.services.deliverer.drain()).toBe(0);
    expect(r.received).toHaveLength(4);

    const ids = new Set(r.received.map((x) => x.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect(new Set(r.received.map((x) => x.body)).size).toBe(1);
    r.received.forEach((x, i) => {
      const ts = Math.floor(sentAt[i]! / 1000);
      expect(x.headers['webhook-timestamp']).toBe(String(ts));
      expect(verify(hook.secret, headersOf(x), x.body, ts)).toBe(true);
    });

    const log = await attempts(t, hook.id);
    expect(log.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([
      [4, 204, 'delivered'],
      [3, 500, 'retrying'],
      [2, 500, 'retrying'],
      [1, 500, 'retrying'],
    ]);
    expect(log.map((a) => a.next_attempt_at)).toEqual([
      null,
      formatMicros((sentAt[2]! + 3000) * 1000),
      formatMicros((sentAt[1]! + 2000) * 1000),
      formatMicros((sentAt[0]! + 1000) * 1000),
    ]);
    expect(log.map((a) => a.attempted_at)).toEqual([...sentAt].reverse().map((ms) => formatMicros(ms * 1000)));
    for (const a of log) {
      expect(a.webhook_id).toBe([...ids][0]);
      expect(a.delivery_status).toBe('delivered');
      expect(a.error).toBeNull();
      expect(a.duration_ms).toEqual(expect.any(Number));
    }
  });

  test('Retry-After longer than the schedule delay is honoured; a shorter one is not', async () => {
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000,5000' });
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    await deviceOffline(t);
    r.respondWith({ status: 503, headers: { 'Retry-After': '10' } }, { status: 429, headers: { 'Retry-After': '1' } });
    await t.services.deliverer.drain();
    const first = t.clock.now();
    t.clock.advance(9_999);
    expect(await t.services.deliverer.drain()).toBe(0);
    t.clock.advance(1);
    expect(await t.services.deliverer.drain()).toBe(1);
    // 1 s asked for, 5 s scheduled: the schedule wins.
    t.clock.advance(4_999);
    expect(await t.services.deliverer.drain()).toBe(0);
    t.clock.advance(1);
    expect(await t.services.deliverer.drain()).toBe(1);
    expect(r.received).toHaveLength(3);
    const log = await attempts(t, hook.id);
    expect(log.map((a) => [a.status_code, a.outcome])).toEqual([
      [204, 'delivered'],
      [429, 'retrying'],
      [503, 'retrying'],
    ]);
    expect(log[2]!.next_attempt_at).toBe(formatMicros((first + 10_000) * 1000));
  });

  test('always failing → dead after 1 + schedule length attempts, visible in deliveries', async () => {
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000,2000' });
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    await deviceOffline(t);
    r.respondWith({ status: 500 }, { status: 502 }, { status: 400 }, { status: 500 });
    await t.services.deliverer.drain();
    t.clock.advance(1000);
    await t.services.deliverer.drain();
    t.clock.advance(2000);
    await t.services.deliverer.drain();
    expect(r.received).toHaveLength(3);
    t.clock.advance(7 * 3_600_000);
    expect(await t.services.deliverer.drain()).toBe(0);
    expect(r.received).toHaveLength(3);
    const log = await attempts(t, hook.id);
    expect(log.map((a) => [a.attempt, a.status_code, a.outcome, a.next_attempt_at === null])).toEqual([
      [3, 400, 'dead', true],
      [2, 502, 'retrying', false],
      [1, 500, 'retrying', false],
    ]);
    expect(log.every((a) => a.delivery_status === 'dead')).toBe(true);
    // The hook itself stays active: the next event is delivered.
    await api(t)
      .get(`/v1/hooks/${hook.id}`)
      .expect(200)
      .expect((res) => expect(res.body.status).toBe('active'));
    await heartbeat(t, dev01);
    await t.services.deliverer.drain();
    expect(r.received).toHaveLength(4);
    expect(parsed(r.received[3]!).type).toBe('device.online');
  });

  test('410 → the hook is disabled, its pending deliveries cancelled, nothing more sent', async () => {
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    // Also watched through the polling trigger, so new events are still logged.
    await api(t).get('/v1/triggers/device-status').expect(200, []);
    await deviceOffline(t);
    r.respondWith({ status: 500 }, { status: 410 });
    await t.services.deliverer.drain();
    // A second event while the first waits for its retry.
    await heartbeat(t, dev03);
    expect(await t.services.deliverer.drain()).toBe(1);
    expect(r.received).toHaveLength(2);
    expect(parsed(r.received[1]!).type).toBe('device.online');

    const shown = (await api(t).get(`/v1/hooks/${hook.id}`).expect(200)).body as Hook;
    expect(shown.status).toBe('disabled');
    t.clock.advance(60_000);
    expect(await t.services.deliverer.drain()).toBe(0);
    // New events are logged but not delivered.
    await heartbeat(t, dev01);
    expect((await api(t).get('/v1/events').expect(200)).body as unknown[]).toHaveLength(3);
    t.clock.advance(60_000);
    expect(await t.services.deliverer.drain()).toBe(0);
    expect(r.received).toHaveLength(2);

    const log = await attempts(t, hook.id);
    expect(log.map((a) => [a.status_code, a.outcome, a.delivery_status])).toEqual([
      [410, 'disabled', 'cancelled'],
      [500, 'retrying', 'cancelled'],
    ]);
    // Subscribing again makes a new, active hook.
    const again = await subscribe(t, { target_url: r.url });
    expect(again.id).not.toBe(hook.id);
    expect(again.status).toBe('active');
  });

  test('a redirect is not followed and counts as a failure', async () => {
    const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const r = await receiver();
    const elsewhere = await receiver('/other');
    const hook = await subscribe(t, { target_url: r.url });
    await deviceOffline(t);
    r.respondWith({ status: 302, headers: { Location: elsewhere.url } }, { status: 307, headers: { Location: '/hook/moved' } });
    await t.services.deliverer.drain();
    t.clock.advance(1000);
    await t.services.deliverer.drain();
    expect(r.received).toHaveLength(2);
    expect(elsewhere.received).toHaveLength(0);
    const log = await attempts(t, hook.id);
    expect(log.map((a) => [a.status_code, a.outcome])).toEqual([
      [307, 'dead'],
      [302, 'retrying'],
    ]);
  });

  test('a receiver slower than WEBHOOK_TIMEOUT_MS → the attempt is an error and is retried', async () => {
    const t = await app({ WEBHOOK_TIMEOUT_MS: '150', WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    await deviceOffline(t);
    const receiverDelayMs = 5000;
    r.respondWith({ status: 204, delayMs: receiverDelayMs });
    const started = Date.now();
    await t.services.deliverer.drain();
    // Gave up at the timeout (150 ms), not when the receiver finally answered: half the
    // receiver's delay is over 16 times the timeout, room for a busy machine.
    expect(Date.now() - started).toBeLessThan(receiverDelayMs / 2);
    t.clock.advance(1000);
    await t.services.deliverer.drain();
    expect(r.received).toHaveLength(2);
    expect(r.received[0]!.headers['webhook-id']).toBe(r.received[1]!.headers['webhook-id']);
    const log = await attempts(t, hook.id);
    expect(log.map((a) => [a.status_code, a.outcome])).toEqual([
      [204, 'delivered'],
      [null, 'retrying'],
    ]);
    expect(log[1]!.error).toMatch(/timed out/);
    expect(log[1]!.duration_ms).toBeGreaterThanOrEqual(100);
  });

  test('no more than 4 deliveries in flight to one target at once', async () => {
    // WEBHOOK_TARGET_CONCURRENCY (default 8 per replica) set to 4: 10 hooks make 3 waves.
    const t = await app({ WEBHOOK_TARGET_CONCURRENCY: '4' });
    let inFlight = 0;
    let maxInFlight = 0;
    let served = 0;
    const server: Server = createServer((req, res) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          inFlight -= 1;
          served += 1;
          res.writeHead(204).end();
        }, 100),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    for (let i = 0; i < 10; i += 1) await subscribe(t, { target_url: `${base}/hook/${i}` });
    await deviceOffline(t);
    const started = Date.now();
    expect(await t.services.deliverer.drain()).toBe(10);
    expect(served).toBe(10);
    expect(maxInFlight).toBeLessThanOrEqual(4);
    expect(maxInFlight).toBeGreaterThan(1);
    // Three waves of at most four.
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    const delivered = await t.value(`SELECT count(*) FROM deliveries WHERE status = 'delivered'`);
    expect(delivered).toBe(10);
  });

  test('a target that became private is refused at delivery time: recorded as failed, not sent', async () => {
    const t = await app({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const r = await receiver();
    const port = new URL(r.url).port;
    const keyHash = hashKey(keys.ana);
    const all = { events: ['device.offline', 'device.online'] as Array<'device.offline' | 'device.online'>, device_ids: null };
    // Stored directly (as if the target changed after subscribing): the HTTP API would refuse them.
    const targets = [r.url, `https://127.0.0.1:${port}/hook`, `https://localhost:${port}/hook`, `https://[::ffff:127.0.0.1]:${port}/hook`];
    const hooks = [];
    for (const target_url of targets) hooks.push((await t.services.hooks.create(keyHash, { target_url, ...all })).hook);
    await api(t).get('/v1/triggers/device-status').expect(200, []);
    await deviceOffline(t);
    expect(await t.services.deliverer.drain()).toBe(4);
    t.clock.advance(1000);
    expect(await t.services.deliverer.drain()).toBe(4);
    expect(r.received).toHaveLength(0);
    for (const hook of hooks) {
      const log = await attempts(t, hook.id);
      expect(log.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([
        [2, null, 'dead'],
        [1, null, 'retrying'],
      ]);
      expect(log[1]!.error).toMatch(/https|loopback/);
    }
  });

  test('the queue survives a restart: fails once, app closed, new app on the same file delivers once with the same webhook-id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hooks-durability-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const databasePath = join(dir, 'connector.db');
    const env = { CONNECTOR_SECRET: connectorSecret, WEBHOOK_RETRY_SCHEDULE_MS: '1000' };
    const clock = new ManualClock(Date.now() - timeoutMs);
    const r = await receiver();

    const before = await app(env, { clock, databasePath });
    const hook = await subscribe(before, { target_url: r.url });
    await deviceOffline(before);
    r.respondWith({ status: 500 });
    await before.services.deliverer.drain();
    expect(r.received).toHaveLength(1);
    await before.close();

    const after = await app(env, { clock, databasePath, dataset: false });
    expect(await after.services.deliverer.drain()).toBe(0);
    clock.advance(1000);
    expect(await after.services.deliverer.drain()).toBe(1);
    expect(r.received).toHaveLength(2);
    const [failed, delivered] = r.received as [Received, Received];
    expect(delivered.headers['webhook-id']).toBe(failed.headers['webhook-id']);
    expect(delivered.body).toBe(failed.body);
    // The signing secret was sealed with CONNECTOR_SECRET and opened by the new process.
    expect(new Webhook(hook.secret).verify(delivered.body, delivered.headers)).toMatchObject({ type: 'device.offline' });
    const log = await attempts(after, hook.id);
    expect(log.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([
      [2, 204, 'delivered'],
      [1, 500, 'retrying'],
    ]);
    await after.close();

    // Delivered is final: a third start sends nothing again.
    const third = await app(env, { clock, databasePath, dataset: false });
    clock.advance(60_000);
    expect(await third.services.deliverer.drain()).toBe(0);
    expect((await pollDue(third)).events).toBe(0);
    expect(await third.services.deliverer.drain()).toBe(0);
    expect(r.received).toHaveLength(2);
  });

  test('a key that loses device:read pauses its watch and shows its hooks paused with the reason', async () => {
    const t = await app();
    const r = await receiver();
    const hook = await subscribe(t, { target_url: r.url });
    await t.all(`UPDATE api_keys SET scopes = '["hooks:write"]' WHERE id = 'key_ana'`);
    t.clock.advance(timeoutMs);
    expect(await pollDue(t)).toMatchObject({ events: 0, failed: 1 });
    const paused = (await api(t).get(`/v1/hooks/${hook.id}`).expect(200)).body as Hook & { status_reason: string };
    expect(paused.status).toBe('paused');
    expect(paused.status_reason).toEqual(expect.any(String));
    expect((await pollDue(t)).keys).toBe(0);
    expect(r.received).toHaveLength(0);
    // Used successfully again: the watch resumes and so do its hooks.
    await t.all(`UPDATE api_keys SET scopes = '["device:read","hooks:write"]' WHERE id = 'key_ana'`);
    t.clock.advance(verifiedKeyTtlMs); // a verified key's scopes are trusted for this long
    await api(t).get('/v1/triggers/device-status').expect(200);
    expect(((await api(t).get(`/v1/hooks/${hook.id}`).expect(200)).body as Hook).status).toBe('active');
  });
});

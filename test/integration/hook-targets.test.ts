import { afterEach, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { ConfigError } from '../../src/config.js';
import { hashKey } from '../../src/auth/keys.js';
import { verify } from '../../src/webhooks/signing.js';
import { privateTargetsHint } from '../../src/webhooks/target-guard.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * POST /v1/hooks refuses targets that are not global unicast (docs/webhooks.md), IPv6 translation and
 * tunnelling prefixes included, with a 400 naming target_url; none of these is stored.
 * WEBHOOK_ALLOWED_TARGETS lets exact origins and address ranges through, over http too, at
 * subscribe and at delivery. Only IP literals, localhost and receivers on 127.0.0.1 are used:
 * nothing outside this machine is resolved or contacted.
 */

const apps: TestApp[] = [];
const receivers: Receiver[] = [];

afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
  for (const r of receivers.splice(0)) await r.stop();
});

async function receiver(): Promise<Receiver> {
  const r = await new Receiver().start('/hook');
  receivers.push(r);
  return r;
}

async function connector(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await buildTestApp({ dataset: catalog(), env: { CONNECTOR_SECRET: 'ab'.repeat(32), ...env } });
  apps.push(t);
  return t;
}

const subscribe = (t: TestApp, target: string) => request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: target });

describe('POST /v1/hooks target_url', () => {
  test.each([
    ['local-use NAT64 64:ff9b:1::/48', 'https://[64:ff9b:1::7f00:1]/hook'],
    ['6to4 2002::/16 (= 127.0.0.1)', 'https://[2002:7f00:1::]/hook'],
    ['SIIT ::ffff:0:0:0/96 (= 127.0.0.1)', 'https://[::ffff:0:7f00:1]/hook'],
    ['Teredo 2001::/32', 'https://[2001::1]/hook'],
    ['IPv4-mapped loopback', 'https://[::ffff:127.0.0.1]/hook'],
    ['unique local', 'https://[fd00::1]/hook'],
  ])('%s: 400 naming target_url, nothing stored', async (_range, target) => {
    const t = await connector();
    const res = await subscribe(t, target).expect(400);
    expect(res.body.message).toMatch(/^target_url /);
    expect((await request(t.app).get('/v1/hooks').set('X-API-Key', keys.ana).expect(200)).body).toEqual([]);
  });

  test.each([
    ['an http:// receiver on this machine', 'http://127.0.0.1:4000/hook', /^target_url must be an absolute https:\/\/ URL; /],
    ['an https:// loopback target', 'https://127.0.0.1:4000/hook', /^target_url must not point to a loopback, private or link-local address; /],
    ['localhost', 'https://localhost:4000/hook', /^target_url must not point to a loopback, private or link-local address; /],
  ])('%s is refused with the settings that allow it named', async (_what, target, problem) => {
    const t = await connector();
    const { message } = (await subscribe(t, target).expect(400)).body as { message: string };
    expect(message).toMatch(problem);
    for (const named of ['WEBHOOK_ALLOWED_TARGETS', 'WEBHOOK_ALLOW_PRIVATE_TARGETS=true', 'npm run demo']) expect(message).toContain(named);
  });

  test('a global unicast IPv6 literal is accepted', async () => {
    const t = await connector();
    await subscribe(t, 'https://[2606:4700::1111]/hook').expect(201);
  });

  test('WEBHOOK_ALLOW_PRIVATE_TARGETS=true still allows all of them', async () => {
    const t = await connector({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    for (const target of ['https://[64:ff9b:1::7f00:1]/a', 'https://[2002:7f00:1::]/b', 'https://[::ffff:0:7f00:1]/c', 'https://[2001::1]/d']) {
      await subscribe(t, target).expect(201);
    }
  });
});

/** The default heartbeat timeout: past it, Ana's online device 01 goes offline. */
const heartbeatTimeoutMs = 300_000;

/** Device 01 times out, the poller records device.offline, the deliverer sends what is due. */
async function offlineDelivered(t: TestApp): Promise<number> {
  t.clock.advance(heartbeatTimeoutMs);
  expect((await pollDue(t)).events).toBe(1);
  return t.services.deliverer.drain();
}

/** A hook stored as it is, past the subscribe check (as if its name resolved elsewhere then). */
async function storedHook(t: TestApp, target: string): Promise<string> {
  const all = { events: ['device.offline', 'device.online'] as Array<'device.offline' | 'device.online'>, device_ids: null };
  // Reading the events enrols the key with the poller (subscribing would): a baseline now.
  await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200, []);
  return (await t.services.hooks.create(hashKey(keys.ana), { target_url: target, ...all })).hook.id;
}

const deliveries = async (t: TestApp, hookId: string) =>
  (await request(t.app).get(`/v1/hooks/${hookId}/deliveries`).set('X-API-Key', keys.ana).expect(200)).body as Array<{
    status_code: number | null;
    error: string | null;
    outcome: string;
  }>;

describe('WEBHOOK_ALLOWED_TARGETS', () => {
  test('an allowed origin over http on 127.0.0.1: subscribed, and the receiver gets the signed delivery', async () => {
    const r = await receiver();
    const t = await connector({ WEBHOOK_ALLOWED_TARGETS: new URL(r.url).origin });
    const hook = (await subscribe(t, r.url).expect(201)).body as { id: string; secret: string };
    // Baseline at subscribe; then device 01 goes offline.
    expect(await offlineDelivered(t)).toBe(1);
    expect(r.received).toHaveLength(1);
    const [delivery] = r.received;
    expect(JSON.parse(delivery!.body)).toMatchObject({ type: 'device.offline', data: { type: 'device.offline', device: { id: 'a4:83:e7:1f:2b:01' } } });
    const headers = {
      'webhook-id': delivery!.headers['webhook-id']!,
      'webhook-timestamp': delivery!.headers['webhook-timestamp']!,
      'webhook-signature': delivery!.headers['webhook-signature']!,
    };
    expect(verify(hook.secret, headers, delivery!.body, Math.floor(t.clock.now() / 1000))).toBe(true);
    expect((await deliveries(t, hook.id)).map((a) => [a.status_code, a.outcome])).toEqual([[204, 'delivered']]);
  });

  test('another port, scheme or host of the allowed origin is refused at subscribe, naming why', async () => {
    const r = await receiver();
    const port = Number(new URL(r.url).port);
    const t = await connector({ WEBHOOK_ALLOWED_TARGETS: `http://127.0.0.1:${port}` });
    const otherPort = port === 65535 ? port - 1 : port + 1;
    expect((await subscribe(t, `http://127.0.0.1:${otherPort}/hook`).expect(400)).body.message).toBe(
      `target_url must use https (http://127.0.0.1:${otherPort} is not an allowed target); ${privateTargetsHint}`,
    );
    expect((await subscribe(t, `https://127.0.0.1:${port}/hook`).expect(400)).body.message).toBe(
      `target_url must not point to a loopback, private or link-local address (https://127.0.0.1:${port} is not an allowed target); ${privateTargetsHint}`,
    );
    expect((await subscribe(t, `http://localhost:${port}/hook`).expect(400)).body.message).toBe(
      `target_url must use https (http://localhost:${port} is not an allowed target); ${privateTargetsHint}`,
    );
    expect((await request(t.app).get('/v1/hooks').set('X-API-Key', keys.ana).expect(200)).body).toEqual([]);
  });

  test('...and at delivery: a stored hook to another host of the same port is refused, nothing sent', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    const t = await connector({ WEBHOOK_ALLOWED_TARGETS: `http://127.0.0.1:${port}`, WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    const allowed = (await subscribe(t, r.url).expect(201)).body as { id: string };
    const other = await storedHook(t, `http://localhost:${port}/hook`);
    expect(await offlineDelivered(t)).toBe(2);
    expect(r.received).toHaveLength(1);
    expect((await deliveries(t, allowed.id)).map((a) => a.outcome)).toEqual(['delivered']);
    const [refused] = await deliveries(t, other);
    expect(refused).toMatchObject({ status_code: null, outcome: 'retrying', error: expect.stringMatching(/not an allowed target/) });
  });

  test('a CIDR range allows http and https targets whose addresses fall in it, and delivers to them', async () => {
    const r = await receiver();
    const t = await connector({ WEBHOOK_ALLOWED_TARGETS: '10.0.0.0/8, 127.0.0.0/8,::1/128' });
    const hook = (await subscribe(t, r.url).expect(201)).body as { id: string };
    for (const target of [
      'http://10.1.2.3:5678/hook',
      'https://10.255.0.1/hook',
      'http://[::1]:5678/hook',
      'http://localhost:5678/hook',
      'https://[::ffff:10.0.0.7]/hook',
    ]) {
      const { id } = (await subscribe(t, target).expect(201)).body as { id: string };
      // Removed again: nothing beyond the receiver is to be contacted.
      await request(t.app).delete(`/v1/hooks/${id}`).set('X-API-Key', keys.ana).expect(204);
    }
    // Public https targets keep working; anything else outside the ranges keeps today's rules.
    const { id: publicHook } = (await subscribe(t, 'https://8.8.8.8/hook').expect(201)).body as { id: string };
    await request(t.app).delete(`/v1/hooks/${publicHook}`).set('X-API-Key', keys.ana).expect(204);
    expect((await subscribe(t, 'http://8.8.8.8/hook').expect(400)).body.message).toBe(
      `target_url must use https (http://8.8.8.8 is not an allowed target); ${privateTargetsHint}`,
    );
    expect((await subscribe(t, 'http://192.168.1.10/hook').expect(400)).body.message).toMatch(/^target_url must use https/);
    expect((await subscribe(t, 'https://[fd00::1]/hook').expect(400)).body.message).toMatch(
      /^target_url must not point to a loopback, private or link-local address/,
    );
    expect(await offlineDelivered(t)).toBe(1);
    expect(r.received).toHaveLength(1);
    expect((await deliveries(t, hook.id)).map((a) => a.outcome)).toEqual(['delivered']);
  });

  test('a range is checked against the address connected to: a stored target outside it is refused at delivery', async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    const t = await connector({ WEBHOOK_ALLOWED_TARGETS: '10.0.0.0/8', WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
    // localhost passes the URL checks under a range (its addresses decide) but resolves to loopback.
    const byName = await storedHook(t, `http://localhost:${port}/hook`);
    const byAddress = await storedHook(t, r.url);
    expect(await offlineDelivered(t)).toBe(2);
    expect(r.received).toHaveLength(0);
    expect((await deliveries(t, byName))[0]).toMatchObject({ status_code: null, error: 'localhost resolves to a forbidden address' });
    expect((await deliveries(t, byAddress))[0]).toMatchObject({ status_code: null, error: expect.stringMatching(/^target_url must use https/) });
  });

  test('WEBHOOK_ALLOW_PRIVATE_TARGETS=true beside a list still allows everything', async () => {
    const r = await receiver();
    const t = await connector({ WEBHOOK_ALLOWED_TARGETS: '10.0.0.0/8', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    await subscribe(t, r.url).expect(201);
    const { id } = (await subscribe(t, 'http://192.168.1.10/hook').expect(201)).body as { id: string };
    await request(t.app).delete(`/v1/hooks/${id}`).set('X-API-Key', keys.ana).expect(204);
    expect(await offlineDelivered(t)).toBe(1);
    expect(r.received).toHaveLength(1);
  });

  test.each([
    ['n8n.internal:5678', 'no scheme'],
    ['http://n8n.internal:5678/webhook', 'a path'],
    ['http://n8n.internal:5678?x=1', 'a query'],
    ['ftp://n8n.internal', 'another scheme'],
    ['http://user:secret@n8n.internal', 'credentials'],
    ['10.0.0.0/33', 'a prefix too long'],
    ['10.0.0/8', 'a short address'],
    ['fd00::/129', 'an IPv6 prefix too long'],
    ['10.0.0.1', 'an address without a prefix'],
  ])('%s (%s) stops the start, naming the variable and the entry', async (entry) => {
    const value = `http://n8n.internal:5678,${entry}`;
    const start = buildTestApp({ env: { WEBHOOK_ALLOWED_TARGETS: value } });
    await expect(start).rejects.toThrow(ConfigError);
    await expect(start).rejects.toThrow(
      `Invalid configuration: WEBHOOK_ALLOWED_TARGETS must list origins such as http://n8n.internal:5678 or CIDR ranges such as 10.0.0.0/8; ${JSON.stringify(entry)} is neither (got ${JSON.stringify(value)})`,
    );
  });
});

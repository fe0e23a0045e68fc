import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * X-Forwarded-For on upstream calls: each caller's own address, so an upstream that limits
 * per client does not see one connector for everyone. A real upstream on 127.0.0.1:0
 * (FakeUpstream) records the header it received.
 */

let upstream: FakeUpstream;
const apps: TestApp[] = [];

beforeAll(async () => {
  upstream = await new FakeUpstream(catalog()).start();
});

afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
  upstream.reset();
});

afterAll(async () => {
  await upstream.stop();
});

async function connector(env: Record<string, string> = {}): Promise<TestApp> {
  const t = await buildTestApp({
    clock: new ManualClock(Date.now()),
    env: {
      ...env,
      DEVICE_API_URL: upstream.baseUrl,
      MENU_API_URL: upstream.baseUrl,
      UPSTREAM_TIMEOUT_MS: '2000',
      UPSTREAM_RETRIES: '2',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      CONNECTOR_SECRET: 'a1'.repeat(32),
    },
  });
  apps.push(t);
  return t;
}

describe('X-Forwarded-For on upstream calls', () => {
  test("carries the caller's socket address (plain IPv4), in both areas", async () => {
    const t = await connector();
    await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(200);
    await request(t.app).get('/v1/menus').set('X-API-Key', keys.ana).expect(200);
    expect(upstream.callsTo('/devices')[0]?.forwardedFor).toBe('127.0.0.1');
    expect(upstream.callsTo('/v1/menus')[0]?.forwardedFor).toBe('127.0.0.1');
  });

  test('an incoming X-Forwarded-For is not trusted by default: the socket address replaces it', async () => {
    const t = await connector();
    await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).set('X-Forwarded-For', '198.51.100.7').expect(200);
    expect(upstream.callsTo('/devices')[0]?.forwardedFor).toBe('127.0.0.1');
  });

  test('with TRUST_PROXY naming the peer, the incoming chain is kept and the peer appended', async () => {
    const t = await connector({ TRUST_PROXY: '127.0.0.0/8' });
    await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).set('X-Forwarded-For', '198.51.100.7, 203.0.113.5').expect(200);
    expect(upstream.callsTo('/devices')[0]?.forwardedFor).toBe('198.51.100.7, 203.0.113.5, 127.0.0.1');
  });

  test('every retry of one call carries the same value', async () => {
    const t = await connector();
    upstream.failNext({ pathPrefix: '/devices', status: 503 }, { pathPrefix: '/devices', status: 503 });
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${keys.ana}`).expect(200);
    const calls = upstream.callsTo('/devices');
    expect(calls).toHaveLength(3);
    expect(calls.map((c) => c.forwardedFor)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
  });

  test('background poll rounds have no caller and send none', async () => {
    const t = await connector();
    await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
    upstream.reset();
    await pollDue(t);
    const polls = upstream.callsTo('/devices');
    expect(polls.length).toBeGreaterThan(0);
    for (const call of polls) expect(call.forwardedFor).toBeUndefined();
  });
});

import { afterEach, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * POST /v1/hooks refuses targets that are not global unicast (docs/webhooks.md), IPv6
 * translation and tunnelling prefixes included, with a 400 naming target_url; none of these
 * is stored. IP literals only: nothing here is resolved or contacted.
 */

const apps: TestApp[] = [];

afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
});

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

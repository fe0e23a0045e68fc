import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * A poll that runs longer than its lease (a key with 100,000 devices) keeps the key: the
 * poller renews the leases of the polls under way, and only its own.
 */

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog() });
});
afterAll(async () => t.close());

const lease = async () => t.one<{ leased_until: number; lease_owner: string | null }>('SELECT leased_until, lease_owner FROM watches');

test('renew moves on the lease its owner holds, and nobody else', async () => {
  await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
  t.clock.advance(60 * 60_000);
  const [watch] = await t.services.watches.claim('replica-a', { limit: 1, leaseMs: 10_000 });
  expect(watch).toBeDefined();
  const claimed = await lease();
  expect(claimed).toMatchObject({ lease_owner: 'replica-a', leased_until: t.clock.now() + 10_000 });

  t.clock.advance(8_000);
  await t.services.watches.renew('replica-b', [watch!.key_hash], 10_000);
  expect(Number((await lease())!.leased_until)).toBe(Number(claimed!.leased_until));
  await t.services.watches.renew('replica-a', [watch!.key_hash], 10_000);
  expect(Number((await lease())!.leased_until)).toBe(t.clock.now() + 10_000);

  // Released: a late renewal does not take the key back.
  await t.services.watches.release(watch!.key_hash, 'replica-a', t.clock.now() + 1000);
  await t.services.watches.renew('replica-a', [watch!.key_hash], 10_000);
  expect(await lease()).toMatchObject({ lease_owner: null });
  expect(Number((await lease())!.leased_until)).toBe(0);
});

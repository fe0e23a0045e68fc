import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { embeddedDeviceSource } from '../../src/sources/embedded-devices.js';
import { SnapshotStore } from '../../src/triggers/snapshots.js';
import { DeviceStatusPoller } from '../../src/triggers/poller.js';
import type { DeviceSource } from '../../src/sources/types.js';

/**
 * A poll that runs longer than its lease (a key with 100,000 devices) keeps the key: the
 * poller renews the leases of the polls under way, and only its own. A key claimed ahead and
 * still waiting when its lease ran out (another replica may hold it now) is not polled.
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
  expect(await t.services.watches.renew('replica-b', [watch!.key_hash], 10_000)).toEqual([]);
  expect(Number((await lease())!.leased_until)).toBe(Number(claimed!.leased_until));
  expect(await t.services.watches.renew('replica-a', [watch!.key_hash], 10_000)).toEqual([watch!.key_hash]);
  expect(Number((await lease())!.leased_until)).toBe(t.clock.now() + 10_000);

  // Released: a late renewal does not take the key back.
  await t.services.watches.release(watch!.key_hash, 'replica-a', t.clock.now() + 1000);
  await t.services.watches.renew('replica-a', [watch!.key_hash], 10_000);
  expect(await lease()).toMatchObject({ lease_owner: null });
  expect(Number((await lease())!.leased_until)).toBe(0);
});

test('a key that waited in the queue past its lease, taken meanwhile by another replica, is not polled again', async () => {
  const t2 = await buildTestApp({ dataset: catalog() });
  try {
    for (const key of [keys.ana, keys.zoe]) await request(t2.app).get('/v1/triggers/device-status').set('X-API-Key', key).expect(200);
    const leaseMs = 10_000;
    t2.clock.advance(60 * 60_000);
    // One poll at a time, so the second key claimed waits in the queue while the first is polled.
    // That first poll takes longer than the lease (the clock moves on while it reads the source),
    // and meanwhile replica B claims the keys whose lease ran out.
    const source = embeddedDeviceSource(t2.services.db, t2.clock, t2.services.config.HEARTBEAT_TIMEOUT_MS);
    const asked: string[] = [];
    let takenByB: string[] = [];
    const devices: DeviceSource = {
      ...source,
      statePages: async function* (principal, pageSize) {
        asked.push(principal.keyHash);
        if (asked.length === 1) {
          t2.clock.advance(leaseMs + 1);
          takenByB = (await t2.services.watches.claim('replica-b', { limit: 10, leaseMs })).map((w) => w.key_hash);
        }
        yield* source.statePages!(principal, pageSize);
      },
    };
    const { services } = t2;
    const poller = new DeviceStatusPoller({
      db: services.db,
      clock: t2.clock,
      logger: services.logger,
      devices,
      watches: services.watches,
      log: services.eventLog,
      snapshots: new SnapshotStore(services.db),
      heartbeatTimeoutMs: services.config.HEARTBEAT_TIMEOUT_MS,
      intervalMs: services.config.POLL_INTERVAL_MS,
      leaseMs,
      concurrency: 1,
    });
    const result = await poller.runUntilIdle();
    expect(takenByB).toHaveLength(2);
    // The first key's poll ran (its record was refused: B holds the key); the second was let go unpolled.
    expect(asked).toHaveLength(1);
    expect(result).toMatchObject({ keys: 2, failed: 2 });
    const owners = await t2.all<{ lease_owner: string | null }>('SELECT lease_owner FROM watches');
    expect(owners.map((o) => o.lease_owner)).toEqual(['replica-b', 'replica-b']);
  } finally {
    await t2.close();
  }
});

import { afterEach, expect, test } from '@jest/globals';
import request from 'supertest';
import { bootstrapCatalog } from '../../src/dataset/bootstrap.js';
import { importDataset, readDatasetFile } from '../../src/dataset/import.js';
import { demoBanner, demoKey } from '../../src/demo/banner.js';
import { createLogger } from '../../src/logger.js';
import { demoDatasetPath } from '../../src/paths.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';

/**
 * `npm start` with no DATASET serves the bundled demo, whose heartbeats are relative to the
 * import (`now-30s`). A later start (the demo untouched) counts them from that start again, so
 * the demo is as alive as on the first start; once another dataset was imported, the catalog
 * is served as stored, and the banner says which of the two it is.
 */

const silent = createLogger('silent');
const timeoutMs = 300_000;
const hour = 3_600_000;
let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function onlineScreens(app: TestApp): Promise<number> {
  const res = await request(app.app).get('/devices?is_online=true&page_size=1').set('Authorization', `Bearer ${demoKey}`).expect(200);
  return (res.body as { total: number }).total;
}

function banner(app: TestApp, demoLoaded: boolean): Promise<string> {
  return demoBanner(app.db, { baseUrl: 'http://localhost:3000', demoLoaded, nowMs: app.clock.now(), heartbeatTimeoutMs: timeoutMs });
}

test('a second start an hour later serves the untouched demo as alive as the first', async () => {
  t = await buildTestApp({ clock: new ManualClock(Date.now()), env: { HEARTBEAT_TIMEOUT_MS: String(timeoutMs), DEVICE_CACHE_TTL_MS: '0' } });
  const first = await bootstrapCatalog(t.db, undefined, t.clock.now(), silent);
  const onlineAtFirstStart = await onlineScreens(t);
  expect(onlineAtFirstStart).toBeGreaterThan(0);

  t.clock.advance(hour);
  expect(await onlineScreens(t)).toBe(0); // nothing sent heartbeats meanwhile
  const second = await bootstrapCatalog(t.db, undefined, t.clock.now(), silent);
  expect(await onlineScreens(t)).toBe(onlineAtFirstStart);
  expect(first.demo).toBe(true);
  expect(second.demo).toBe(true);
  const text = await banner(t, second.demo);
  expect(text).toContain(`Demo catalog loaded. Demo key (all scopes, Ana at Harbor Street Diner): ${demoKey}`);
  expect(text).toContain(`${onlineAtFirstStart} of Ana's`);
  expect(text).toMatch(/goes offline 5 min after its last one/);
  // Why the polling trigger answers [] at first, and what makes it answer more.
  expect(text).toContain(`curl -s -H 'X-API-Key: ${demoKey}' http://localhost:3000/v1/triggers/device-status`);
  expect(text).toContain('the trigger answers [] until a screen changes status');
  expect(text).toMatch(/the first screens go offline 5 min after their last heartbeat,\s+or run npm run demo/);
});

test('once another dataset was imported, the catalog is served as stored and the banner says so', async () => {
  t = await buildTestApp({ clock: new ManualClock(Date.now()), env: { HEARTBEAT_TIMEOUT_MS: String(timeoutMs), DEVICE_CACHE_TTL_MS: '0' } });
  await bootstrapCatalog(t.db, undefined, t.clock.now(), silent);
  await importDataset(t.db, { accounts: [{ id: 'acc_mine', name: 'Mine' }] }, { nowMs: t.clock.now() });

  t.clock.advance(hour);
  const later = await bootstrapCatalog(t.db, undefined, t.clock.now(), silent);
  expect(await onlineScreens(t)).toBe(0);
  expect(later).toEqual({ imported: null, demo: false });
  const text = await banner(t, later.demo);
  expect(text).not.toContain('Demo catalog loaded');
  expect(text).toContain('The catalog has changed since the demo was loaded and is served as stored: 0 of');
});

test('a catalog the demo filled before its origin was recorded still counts as the demo', async () => {
  t = await buildTestApp({ clock: new ManualClock(Date.now()), env: { HEARTBEAT_TIMEOUT_MS: String(timeoutMs), DEVICE_CACHE_TTL_MS: '0' } });
  await importDataset(t.db, readDatasetFile(demoDatasetPath), { nowMs: t.clock.now() });
  await t.all('DELETE FROM catalog_origin');
  t.clock.advance(hour);
  expect((await bootstrapCatalog(t.db, undefined, t.clock.now(), silent)).demo).toBe(true);
  expect(await onlineScreens(t)).toBeGreaterThan(0);
});

test('the banner of `npm run demo` says the screens keep beating', async () => {
  t = await buildTestApp({ env: { HEARTBEAT_TIMEOUT_MS: '20000' } });
  await bootstrapCatalog(t.db, undefined, t.clock.now(), silent);
  const text = await demoBanner(t.db, {
    baseUrl: 'http://localhost:3000',
    demoLoaded: true,
    nowMs: t.clock.now(),
    heartbeatTimeoutMs: 20_000,
    heartbeatsSimulated: true,
  });
  expect(text).toMatch(/Heartbeat times count from this start: \d+ of Ana's \d+ screens are online, and they keep sending heartbeats\./);
  expect(text).toContain(
    'the trigger answers [] until a screen changes status: its first call starts watching the key; here screens go offline and come back every minute or so',
  );
  expect(text).not.toContain('npm start');
});

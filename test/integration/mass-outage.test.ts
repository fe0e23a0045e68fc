import { afterEach, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { deviceBenchKey, deviceDataset } from '../../bench/lib/devices.js';

/**
 * A mass outage (docs/triggers.md): thousands of one key's devices going offline in the same
 * poll are all recorded and fanned out to its hooks, in one transaction, whatever the engines'
 * limits on bound parameters per statement (SQLite 32,766; PostgreSQL 65,535: 10,000 events
 * of 7 columns in one statement would pass neither).
 */
let t: TestApp;
afterEach(async () => {
  await t.close();
});

const devices = 10_000;

test(`${devices.toLocaleString('en')} devices going offline in one poll: every event is recorded and queued for the hook`, async () => {
  t = await buildTestApp({ dataset: deviceDataset(devices), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const get = (path: string) => request(t.app).get(path).set('X-API-Key', deviceBenchKey);
  await get('/v1/triggers/device-status').expect(200, []);
  const statsOf = (table: string) =>
    t.value(`SELECT count(*) FROM pg_stats WHERE schemaname = current_schema() AND tablename = '${table}' AND attname = 'status'`);
  // PostgreSQL: the baseline of 10,000 devices renews the snapshot's planner statistics, so the
  // next polls' look-ups by id probe the index instead of scanning the key's whole snapshot.
  if (t.db.engine === 'postgres') expect(Number(await statsOf('device_snapshots'))).toBe(1);
  await request(t.app)
    .post('/v1/hooks')
    .set('X-API-Key', deviceBenchKey)
    .send({ target_url: 'http://127.0.0.1:9/outage', events: ['device.offline'] })
    .expect(201);

  t.clock.advance(3_600_000);
  expect((await pollDue(t)).events).toBe(devices);
  expect(Number(await t.value("SELECT count(*) FROM events WHERE type = 'device.offline'"))).toBe(devices);
  expect(Number(await t.value('SELECT count(*) FROM deliveries'))).toBe(devices);
  const newest = await get('/v1/triggers/device-status?limit=1').expect(200);
  expect(newest.body[0]).toMatchObject({ type: 'device.offline', status: 'offline' });
  if (t.db.engine === 'postgres') {
    // Planner statistics taken right after it, so the deliverer's claim walks its index
    // instead of sorting every pending delivery (autovacuum may be a minute away, or off).
    expect(Number(await statsOf('deliveries'))).toBe(1);
  }
  // Recorded once: the next poll finds nothing new.
  expect((await pollDue(t)).events).toBe(0);
}, 120_000);

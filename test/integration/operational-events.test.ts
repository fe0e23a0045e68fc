import { afterEach, expect, test } from '@jest/globals';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { formatMicros } from '../../src/time/timestamps.js';

// docs/webhooks.md, "Operational events": hook.disabled (a 410) and delivery.dead (retries
// exhausted) are logged in the key's event log and delivered to the key's other hooks that
// list them. Ana's only online device is 01; it goes offline once the 5-minute timeout passes.
const dev01 = 'a4:83:e7:1f:2b:01';
const timeoutMs = 300_000;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(): Promise<{ t: TestApp; failing: Receiver; watcher: Receiver; hookId: string; watcherSecret: string }> {
  const t = await buildTestApp({
    clock: new ManualClock(Date.now() - timeoutMs),
    dataset: catalog(),
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_RETRY_SCHEDULE_MS: '1000' },
  });
  cleanups.push(() => t.close());
  const failing = await new Receiver().start();
  const watcher = await new Receiver().start('/ops');
  cleanups.push(
    () => failing.stop(),
    () => watcher.stop(),
  );
  const hook = await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: failing.url }).expect(201);
  const ops = await request(t.app)
    .post('/v1/hooks')
    .set('X-API-Key', keys.ana)
    .send({ target_url: watcher.url, events: ['hook.disabled', 'delivery.dead'] })
    .expect(201);
  expect(ops.body.events).toEqual(['delivery.dead', 'hook.disabled']);
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);
  return { t, failing, watcher, hookId: hook.body.id as string, watcherSecret: ops.body.secret as string };
}

const events = async (t: TestApp, query = '') =>
  (await request(t.app).get(`/v1/events${query}`).set('X-API-Key', keys.ana).expect(200)).body as Array<{
    id: string;
    type: string;
    data?: Record<string, string>;
  }>;

test('delivery.dead: logged, delivered to the other hook that lists it (only), with the delivery and event ids', async () => {
  const { t, failing, watcher, hookId, watcherSecret } = await setup();
  failing.respondWith({ status: 500 }, { status: 502 });
  await t.services.deliverer.runOnce();
  t.clock.advance(1000);
  await t.services.deliverer.runOnce();
  // The notice is logged after the record: wait for its delivery to be queued.
  let delivered = 0;
  for (let i = 0; i < 1000 && delivered === 0; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    delivered = await t.services.deliverer.runOnce();
  }
  expect(watcher.received).toHaveLength(1);
  const body = new Webhook(watcherSecret).verify(watcher.received[0]!.body, watcher.received[0]!.headers) as {
    type: string;
    data: { type: string; data: Record<string, string> };
  };
  const [dead] = (await request(t.app).get(`/v1/hooks/${hookId}/deliveries`).set('X-API-Key', keys.ana).expect(200)).body as Array<{
    delivery_id: string;
    event_id: string;
  }>;
  expect(body).toMatchObject({
    type: 'delivery.dead',
    data: {
      type: 'delivery.dead',
      data: {
        hook_id: hookId,
        target_url: failing.url,
        reason: 'Every attempt failed; the last: HTTP 502',
        delivery_id: dead!.delivery_id,
        event_id: dead!.event_id,
      },
    },
  });
  // The failing hook itself got only its device event, twice; it does not list the notices.
  expect(failing.received).toHaveLength(2);
  expect((await events(t, '?type=delivery.dead')).map((e) => e.type)).toEqual(['delivery.dead']);
  expect((await events(t)).map((e) => e.type)).toEqual(['device.offline']);
  expect((await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200)).body.map((e: { type: string }) => e.type)).toEqual([
    'device.offline',
  ]);
});

test('hook.disabled on a 410, with the reason; a hook never hears of itself; the type filter is checked', async () => {
  const { t, failing, watcher, hookId } = await setup();
  failing.respondWith({ status: 410 });
  await t.services.deliverer.runOnce();
  for (let i = 0; i < 1000 && watcher.received.length === 0; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await t.services.deliverer.runOnce();
  }
  expect(watcher.received.map((r) => JSON.parse(r.body).data)).toEqual([
    {
      id: expect.stringMatching(/^evt_/),
      type: 'hook.disabled',
      occurred_at: formatMicros(t.clock.now() * 1000),
      data: { hook_id: hookId, target_url: failing.url, reason: 'The receiver answered 410 Gone' },
    },
  ]);
  expect((await events(t, '?type=hook.disabled,device.offline')).map((e) => e.type)).toEqual(['device.offline', 'hook.disabled']);
  const bad = await request(t.app).get('/v1/events?type=hook.gone').set('X-API-Key', keys.ana).expect(400);
  expect(bad.body.message).toBe('type must be device.offline, device.online, hook.disabled or delivery.dead (comma-separated)');
  // The watcher lists only operational events: a device change is not sent to it.
  await t.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', formatMicros(t.clock.now() * 1000), dev01);
  expect((await pollDue(t)).events).toBe(1);
  await t.services.deliverer.runOnce();
  expect(watcher.received).toHaveLength(1);
});

import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';

let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await new Receiver().start();
  // Real wall-clock start: receivers check webhook-timestamp against their own clock.
  t = await buildTestApp({ clock: new ManualClock(Date.now()), dataset: catalog(), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
});
afterAll(async () => {
  await t.close();
  await receiver.stop();
});

test('a device going offline reaches a subscribed receiver as one signed webhook', async () => {
  const created = await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: receiver.url }).expect(201);
  expect(created.body.secret).toMatch(/^whsec_/);
  await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200, []);
  t.clock.advance(5 * 60_000);
  const polled = await pollDue(t);
  expect(polled.events).toBe(1);
  await t.services.deliverer.drain();
  expect(receiver.received).toHaveLength(1);
  const delivery = receiver.received[0]!;
  const payload = new Webhook(created.body.secret).verify(delivery.body, delivery.headers) as { type: string; data: { device: { id: string } } };
  expect(payload.type).toBe('device.offline');
  expect(payload.data.device.id).toBe('a4:83:e7:1f:2b:01');
  const events = await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
  expect(events.body).toHaveLength(1);
  const heartbeat = Date.parse(events.body[0].device.last_heartbeat_at);
  expect(Date.parse(events.body[0].occurred_at)).toBe(heartbeat + 300_000);
  const deliveries = await request(t.app).get(`/v1/hooks/${created.body.id}/deliveries`).set('X-API-Key', keys.ana).expect(200);
  expect(deliveries.body[0]).toMatchObject({ attempt: 1, status_code: 204, outcome: 'delivered' });
});

import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * A failed delivery attempt is logged at warn (with its hook, event, status and outcome, never
 * the key or the secret), so a receiver that is down shows in the log at the default level; a
 * delivered attempt stays at debug.
 */

const lines: string[] = [];
let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  receiver = await new Receiver().start();
  t = await buildTestApp({
    clock: new ManualClock(Date.now()),
    dataset: catalog(),
    logLines: lines,
    env: { LOG_LEVEL: 'info', WEBHOOK_ALLOWED_TARGETS: '127.0.0.0/8' },
  });
});
afterAll(async () => {
  await t.close();
  await receiver.stop();
});

test('an attempt answered 500 is logged at warn; the retry that is delivered is not logged at info', async () => {
  const created = await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: receiver.url }).expect(201);
  await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200, []);
  t.clock.advance(5 * 60_000);
  expect((await pollDue(t)).events).toBe(1);
  receiver.respondWith({ status: 500 });
  await t.services.deliverer.drain();
  const attempts = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'webhook attempt');
  expect(attempts()).toEqual([expect.objectContaining({ level: 40, hook: created.body.id, status: 500, outcome: 'retrying', attempt: 1 })]);
  t.clock.advance(60 * 60_000);
  await t.services.deliverer.drain();
  expect(receiver.received).toHaveLength(2);
  expect(attempts()).toHaveLength(1);
  const text = lines.join('\n');
  expect(text).not.toContain(keys.ana);
  expect(text).not.toContain(created.body.secret);
});

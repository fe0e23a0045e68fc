import { afterEach, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { Receiver } from '../helpers/receiver.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * The 7-day retention (docs/webhooks.md, "Retention"): a pending delivery whose event passes it
 * becomes dead with its reason, visible in the deliveries list (never dropped silently); events
 * and finished deliveries go a retention after their last attempt; disabled hooks go a
 * retention after they were disabled.
 */
const day = 86_400_000;
const timeoutMs = 300_000;
let t: TestApp;
let receiver: Receiver | undefined;

afterEach(async () => {
  await receiver?.stop();
  receiver = undefined;
  await t.close();
});

async function app(): Promise<TestApp> {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.parse('2026-06-01T12:00:00Z')), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  return t;
}

const auth = { 'X-API-Key': keys.ana };

/** A hook to a port nothing listens on, and device events queued for it (the deliverer is not running). */
async function pendingDeliveries(): Promise<{ hookId: string; events: number }> {
  const hook = await request(t.app).post('/v1/hooks').set(auth).send({ target_url: 'http://127.0.0.1:9/hook' }).expect(201);
  await pollDue(t);
  t.clock.advance(timeoutMs);
  const { events } = await pollDue(t);
  expect(events).toBeGreaterThan(0);
  return { hookId: hook.body.id, events };
}

const count = async (sql: string, ...params: unknown[]) => Number(await t.value(sql, ...params));

test('a delivery still pending when its event passes the retention is dead with the reason, and shown for 7 more days', async () => {
  await app();
  const { hookId, events } = await pendingDeliveries();
  expect(await count("SELECT count(*) FROM deliveries WHERE status = 'pending'")).toBe(events);

  t.clock.advance(7 * day + 60_000);
  await t.services.retention.runOnce();
  expect(await count("SELECT count(*) FROM deliveries WHERE status = 'pending'")).toBe(0);
  expect(await count("SELECT count(*) FROM deliveries WHERE status = 'dead'")).toBe(events);
  const attempts = (await request(t.app).get(`/v1/hooks/${hookId}/deliveries`).set(auth).expect(200)).body as Array<Record<string, unknown>>;
  expect(attempts).toHaveLength(events);
  for (const attempt of attempts) {
    expect(attempt).toMatchObject({
      outcome: 'dead',
      error: 'The event passed the 7-day retention before it could be delivered',
      status_code: null,
      delivery_status: 'dead',
    });
  }
  // The events stay while their end is shown...
  expect(await count('SELECT count(*) FROM events')).toBe(events);

  // ...and go, with the deliveries and attempts, a retention later.
  t.clock.advance(7 * day + 60_000);
  await t.services.retention.runOnce();
  expect(await count('SELECT count(*) FROM events')).toBe(0);
  expect(await count('SELECT count(*) FROM deliveries')).toBe(0);
  expect((await request(t.app).get(`/v1/hooks/${hookId}/deliveries`).set(auth).expect(200)).body).toEqual([]);
});

test('events with no pending delivery and no recent attempt go after 7 days', async () => {
  await app();
  await request(t.app).get('/v1/triggers/device-status').set(auth).expect(200);
  await pollDue(t);
  t.clock.advance(timeoutMs);
  const { events } = await pollDue(t);
  expect(await count('SELECT count(*) FROM events')).toBe(events);
  t.clock.advance(7 * day - 60_000);
  await t.services.retention.runOnce();
  expect(await count('SELECT count(*) FROM events')).toBe(events);
  t.clock.advance(120_000);
  await t.services.retention.runOnce();
  expect(await count('SELECT count(*) FROM events')).toBe(0);
});

test('a disabled hook is deleted 7 days after it was disabled, with its queue; an active one stays', async () => {
  await app();
  const { hookId } = await pendingDeliveries();
  const active = (await request(t.app).post('/v1/hooks').set(auth).send({ target_url: 'http://127.0.0.1:9/other' }).expect(201)).body.id as string;
  await t.db.kysely.updateTable('hooks').set({ status: 'disabled', disabled_at: t.clock.now() }).where('id', '=', hookId).execute();
  // One disabled before the time was kept: it gets a full retention from the first sweep.
  const legacy = (await request(t.app).post('/v1/hooks').set(auth).send({ target_url: 'http://127.0.0.1:9/legacy' }).expect(201)).body.id as string;
  await t.db.kysely.updateTable('hooks').set({ status: 'disabled', disabled_at: null }).where('id', '=', legacy).execute();

  t.clock.advance(6 * day);
  await t.services.retention.runOnce();
  expect(await count('SELECT count(*) FROM hooks')).toBe(3);
  t.clock.advance(day + 60_000);
  await t.services.retention.runOnce();
  const left = (await t.db.kysely.selectFrom('hooks').select('id').orderBy('id').execute()).map((h) => h.id);
  expect(left.sort()).toEqual([active, legacy].sort());
  await request(t.app).get(`/v1/hooks/${hookId}`).set(auth).expect(404);
  expect(await count('SELECT count(*) FROM deliveries WHERE hook_id = ?', hookId)).toBe(0);
  // The legacy hook got its time at the first sweep (6 days in): it goes 7 days after that.
  t.clock.advance(6 * day);
  await t.services.retention.runOnce();
  expect((await t.db.kysely.selectFrom('hooks').select('id').execute()).map((h) => h.id)).toEqual([active]);
});

test('a receiver answering 410, end to end: the hook shows disabled and gets nothing more; a retention and an interval later it is gone', async () => {
  await app();
  receiver = await new Receiver().start();
  receiver.respondWith(...Array.from({ length: 5 }, () => ({ status: 410 })));
  const hookId = (await request(t.app).post('/v1/hooks').set(auth).send({ target_url: receiver.url }).expect(201)).body.id as string;
  // Also watched through the polling trigger, so events are still logged once the hook is disabled.
  await request(t.app).get('/v1/triggers/device-status').set(auth).expect(200);
  await pollDue(t);
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);

  expect(await t.services.deliverer.drain()).toBe(1);
  expect(receiver.received).toHaveLength(1);
  const disabledAt = t.clock.now();
  const shown = (await request(t.app).get(`/v1/hooks/${hookId}`).set(auth).expect(200)).body as Record<string, unknown>;
  expect(shown).toMatchObject({ id: hookId, status: 'disabled', status_reason: 'The receiver answered 410 Gone' });

  // Device 01 comes back: the event is logged, nothing is sent.
  await t.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', formatMicros(t.clock.now() * 1000), 'a4:83:e7:1f:2b:01');
  expect((await pollDue(t)).events).toBe(1);
  expect(await t.services.deliverer.drain()).toBe(0);
  t.clock.advance(60_000);
  expect(await t.services.deliverer.drain()).toBe(0);
  expect(receiver.received).toHaveLength(1);

  // Still shown just before the retention ends...
  t.clock.advance(disabledAt + 7 * day - 1 - t.clock.now());
  await t.services.retention.runOnce();
  expect((await request(t.app).get(`/v1/hooks/${hookId}`).set(auth).expect(200)).body.status).toBe('disabled');
  // ...and gone with the sweep an interval after it (the sweep runs once per POLL_INTERVAL_MS).
  t.clock.advance(1 + t.config.POLL_INTERVAL_MS);
  await t.services.retention.runOnce();
  await request(t.app).get(`/v1/hooks/${hookId}`).set(auth).expect(404);
  expect((await request(t.app).get('/v1/hooks').set(auth).expect(200)).body).toEqual([]);
  expect(receiver.received).toHaveLength(1);
});

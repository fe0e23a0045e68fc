import { expect, test } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import type { TestApp } from '../helpers/app.js';
import type { Receiver } from '../helpers/receiver.js';
import { hookCalls, hookKit } from '../helpers/hook-kit.js';
import { pollDue } from '../helpers/poll.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { verifiedKeyTtlMs } from '../../src/auth/embedded-keys.js';

// docs/webhooks.md, "Operational events": hook.disabled (a 410) and delivery.dead (retries
// exhausted) are logged in the key's event log and delivered to the key's other hooks that
// list them. Ana's only online device is 01; it goes offline once the 5-minute timeout passes.
const dev01 = 'a4:83:e7:1f:2b:01';
const timeoutMs = 300_000;

const { app, receiver } = hookKit(timeoutMs);

async function setup(): Promise<{ t: TestApp; failing: Receiver; watcher: Receiver; hookId: string; watcherSecret: string }> {
  const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
  const failing = await receiver();
  const watcher = await receiver('/ops');
  const hook = await hookCalls(t).post('/v1/hooks', { target_url: failing.url }).expect(201);
  const ops = await hookCalls(t)
    .post('/v1/hooks', { target_url: watcher.url, events: ['hook.disabled', 'delivery.dead'] })
    .expect(201);
  expect(ops.body.events).toEqual(['delivery.dead', 'hook.disabled']);
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);
  return { t, failing, watcher, hookId: hook.body.id as string, watcherSecret: ops.body.secret as string };
}

const events = async (t: TestApp, query = '') =>
  (await hookCalls(t).get(`/v1/events${query}`).expect(200)).body as Array<{
    id: string;
    type: string;
    data?: Record<string, string>;
  }>;

test('delivery.dead: logged, delivered to the other hook that lists it (only), with the delivery and event ids', async () => {
  const { t, failing, watcher, hookId, watcherSecret } = await setup();
  failing.respondWith({ status: 500 }, { status: 502 });
  await t.services.deliverer.drain();
  t.clock.advance(1000);
  await t.services.deliverer.drain();
  // The notice is logged after the record, in the background: the drain may send it or not.
  for (let i = 0; i < 1000 && watcher.received.length === 0; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await t.services.deliverer.drain();
  }
  expect(watcher.received).toHaveLength(1);
  const body = new Webhook(watcherSecret).verify(watcher.received[0]!.body, watcher.received[0]!.headers) as {
    type: string;
    data: { type: string; data: Record<string, string> };
  };
  const [dead] = (await hookCalls(t).get(`/v1/hooks/${hookId}/deliveries`).expect(200)).body as Array<{
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
  expect((await hookCalls(t).get('/v1/triggers/device-status').expect(200)).body.map((e: { type: string }) => e.type)).toEqual(['device.offline']);
});

test('hook.disabled on a 410, with the reason; a hook never hears of itself; the type filter is checked', async () => {
  const { t, failing, watcher, hookId } = await setup();
  failing.respondWith({ status: 410 });
  await t.services.deliverer.drain();
  for (let i = 0; i < 1000 && watcher.received.length === 0; i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    await t.services.deliverer.drain();
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
  const bad = await hookCalls(t).get('/v1/events?type=hook.gone').expect(400);
  expect(bad.body.message).toBe('type must be device.offline, device.online, hook.disabled or delivery.dead (comma-separated)');
  // The watcher lists only operational events: a device change is not sent to it.
  await t.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', formatMicros(t.clock.now() * 1000), dev01);
  expect((await pollDue(t)).events).toBe(1);
  await t.services.deliverer.drain();
  expect(watcher.received).toHaveLength(1);
});

test('hook.disabled when a refused key pauses its hooks: one notice per hook, to the other (paused) hooks that list it, logged, never twice', async () => {
  const lines: string[] = [];
  const t = await app({ LOG_LEVEL: 'info' }, lines);
  const device = await receiver();
  const watcher = await receiver('/ops');
  const hook = (await hookCalls(t).post('/v1/hooks', { target_url: device.url }).expect(201)).body as { id: string };
  const ops = (
    await hookCalls(t)
      .post('/v1/hooks', { target_url: watcher.url, events: ['hook.disabled'] })
      .expect(201)
  ).body as { id: string; secret: string };
  expect((await pollDue(t)).events).toBe(0); // the baseline
  // The key loses device:read: its watch pauses, and so do both hooks.
  await t.all(`UPDATE api_keys SET scopes = '["hooks:write"]' WHERE id = 'key_ana'`);
  t.clock.advance(timeoutMs);
  expect(await pollDue(t)).toMatchObject({ events: 0, failed: 1 });
  const shown = (await hookCalls(t).get(`/v1/hooks/${hook.id}`).expect(200)).body as { status: string; status_reason: string };
  expect(shown).toMatchObject({ status: 'paused', status_reason: expect.stringMatching(/^Key refused: /) });
  await t.services.deliverer.drain();
  // The watcher (paused too: a pause stops the watch, not deliveries) hears of the device hook, never of itself.
  expect(watcher.received).toHaveLength(1);
  const sent = new Webhook(ops.secret).verify(watcher.received[0]!.body, watcher.received[0]!.headers) as { type: string; data: { id: string } };
  expect(sent).toMatchObject({
    type: 'hook.disabled',
    data: {
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'hook.disabled',
      occurred_at: formatMicros(t.clock.now() * 1000),
      data: { hook_id: hook.id, target_url: device.url, reason: shown.status_reason },
    },
  });
  expect(device.received).toHaveLength(0);
  // Logged in the service's log, once per paused hook.
  const logged = lines.map((l) => JSON.parse(l) as { msg: string; type?: string; hook?: string }).filter((l) => l.msg === 'operational event');
  expect(logged.map((l) => [l.type, l.hook]).sort()).toEqual(
    [
      ['hook.disabled', hook.id],
      ['hook.disabled', ops.id],
    ].sort(),
  );
  // Paused already: later rounds pause nothing more and notice nothing more.
  expect((await pollDue(t)).keys).toBe(0);
  await t.services.deliverer.drain();
  expect(watcher.received).toHaveLength(1);
  // In the key's event log (read once the key may read again): one notice per hook, the one sent among them.
  await t.all(`UPDATE api_keys SET scopes = '["device:read","hooks:write"]' WHERE id = 'key_ana'`);
  t.clock.advance(verifiedKeyTtlMs);
  const logged2 = await events(t, '?type=hook.disabled');
  expect(logged2.map((e) => e.data!.hook_id).sort()).toEqual([hook.id, ops.id].sort());
  expect(logged2.map((e) => e.id)).toContain(sent.data.id);
  expect(logged2.every((e) => e.data!.reason === shown.status_reason)).toBe(true);
  expect(await events(t)).toEqual([]);
});

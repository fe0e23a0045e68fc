import { afterEach, expect, test } from '@jest/globals';
import request from 'supertest';
import { hashKey } from '../../src/auth/keys.js';
import type { DeviceEvent } from '../../src/catalog/event.js';
import { LeaseLostError } from '../../src/triggers/event-log.js';
import { fairSpacingMs } from '../../src/webhooks/fan-out.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { queueOfflineEvents } from '../helpers/queued-events.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * A poll's record (EventLog.record) with events: the key's schedule, its snapshot, the new
 * events and their deliveries, all or nothing. On PostgreSQL it is one statement
 * (event-log.ts recordInOneStatement, the fan-out in SQL: fan-out.ts queueDeliveriesSql); on
 * SQLite a transaction whose fan-out is fan-out.ts queueDeliveries. The same expectations on
 * both engines: the SQL makes what the JavaScript fan-out makes.
 */
let t: TestApp;
afterEach(async () => {
  const app = t;
  t = undefined as unknown as TestApp;
  await app?.close();
});

const keyHash = hashKey(keys.ana);
const d1 = 'a4:83:e7:1f:2b:01';
const d2 = 'a4:83:e7:1f:2b:02';
const owner = 'replica-a';

function offline(id: string, device: string): DeviceEvent {
  return {
    id,
    type: 'device.offline',
    occurred_at: '2026-06-01T12:00:05.000000Z',
    device: { id: device },
    previous_status: 'online',
    status: 'offline',
  } as unknown as DeviceEvent;
}

async function hook(path: string, body: Record<string, unknown>): Promise<string> {
  const res = await request(t.app)
    .post('/v1/hooks')
    .set('X-API-Key', keys.ana)
    .send({ target_url: `http://127.0.0.1:9/${path}`, ...body })
    .expect(201);
  return res.body.id as string;
}

/** Leases the key to `owner`, as the poller's claim does once it is due. */
async function lease(): Promise<void> {
  t.clock.advance(t.config.POLL_INTERVAL_MS);
  const claimed = await t.services.watches.claim(owner, { limit: 10, leaseMs: 60_000 });
  expect(claimed.map((w) => w.key_hash)).toContain(keyHash);
}

const record = (events: DeviceEvent[], nextPollAt: number) =>
  t.services.eventLog.record(
    keyHash,
    // A row per device, its last event's (as a poll's comparison leaves it).
    {
      changed: [...new Map(events.map((e) => [e.device.id, { status: 'offline' as const, last_heartbeat_at: null, last_event_id: e.id }]))],
      vanished: [],
      written: events.length,
      digest: { next: null },
    },
    events,
    false,
    { owner, nextPollAt },
  );

test('a record queues each new event to the matching hooks, placed fairly, and moves the key on', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const all = await hook('all', {});
  const one = await hook('one', { device_ids: [d1] });
  const online = await hook('online', { events: ['device.online'] });
  // A backlog of two on `all` (d2 is not `one`'s): the origin's virtual time is `before`.
  const before = t.clock.now();
  await queueOfflineEvents(t.db, keyHash, d2, ['evt_old_0', 'evt_old_1'], before);
  await lease();
  const now = t.clock.now();

  const fresh = await record([offline('evt_r_1', d1), offline('evt_r_2', d2)], now + 10_000);
  expect(fresh.map((e) => e.id)).toEqual(['evt_r_1', 'evt_r_2']);

  const rows = await t.all<{ hook_id: string; webhook_id: string; fair_at: number | string; event_id: string; target_origin: string }>(
    `SELECT d.hook_id, d.webhook_id, d.fair_at, e.id AS event_id, d.target_origin FROM deliveries d JOIN events e ON e.seq = d.event_seq
     WHERE e.id LIKE 'evt_r_%' ORDER BY d.hook_id, d.fair_at`,
  );
  const got = rows.map((r) => ({ ...r, fair_at: Number(r.fair_at) }));
  // `all` has a backlog: after its own last delivery. `one` has none: at the origin's virtual time.
  expect(got.filter((r) => r.hook_id === all)).toEqual([
    {
      hook_id: all,
      webhook_id: `msg_${all.replace(/^hook_/, '')}_r_1`,
      fair_at: before + 2 * fairSpacingMs,
      event_id: 'evt_r_1',
      target_origin: 'http://127.0.0.1:9',
    },
    {
      hook_id: all,
      webhook_id: `msg_${all.replace(/^hook_/, '')}_r_2`,
      fair_at: before + 3 * fairSpacingMs,
      event_id: 'evt_r_2',
      target_origin: 'http://127.0.0.1:9',
    },
  ]);
  expect(got.filter((r) => r.hook_id === one)).toEqual([
    { hook_id: one, webhook_id: `msg_${one.replace(/^hook_/, '')}_r_1`, fair_at: before, event_id: 'evt_r_1', target_origin: 'http://127.0.0.1:9' },
  ]);
  expect(got.filter((r) => r.hook_id === online)).toEqual([]);
  const cursors = await t.all<{ id: string; fair_cursor: number | string }>('SELECT id, fair_cursor FROM hooks ORDER BY id');
  expect(Object.fromEntries(cursors.map((c) => [c.id, Number(c.fair_cursor)]))).toMatchObject({
    [all]: before + 3 * fairSpacingMs,
    [one]: before,
  });

  const watch = await t.one<{ next_poll_at: number | string; lease_owner: string | null }>(
    'SELECT next_poll_at, lease_owner FROM watches WHERE key_hash = ?',
    keyHash,
  );
  expect({ next: Number(watch!.next_poll_at), owner: watch!.lease_owner }).toEqual({ next: now + 10_000, owner: null });
  const snap = await t.one<{ status: string; last_event_id: string }>(
    'SELECT status, last_event_id FROM device_snapshots WHERE key_hash = ? AND device_id = ?',
    keyHash,
    d2,
  );
  expect(snap).toEqual({ status: 'offline', last_event_id: 'evt_r_2' });

  // The same events again (another replica saw them too): none is new, nothing queued twice.
  await lease();
  expect(await record([offline('evt_r_1', d1), offline('evt_r_2', d2), offline('evt_r_3', d1)], t.clock.now() + 10_000)).toEqual([offline('evt_r_3', d1)]);
  const counts = await t.all<{ id: string; n: number | string }>(
    `SELECT e.id, count(d.id) AS n FROM events e LEFT JOIN deliveries d ON d.event_seq = e.seq WHERE e.id LIKE 'evt_r_%' GROUP BY e.id ORDER BY e.id`,
  );
  expect(counts.map((c) => [c.id, Number(c.n)])).toEqual([
    ['evt_r_1', 2],
    ['evt_r_2', 1],
    ['evt_r_3', 2],
  ]);
});

test('a record under a lease no longer held writes nothing', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  await hook('all', {});
  await lease();
  const watch = await t.one<{ next_poll_at: number | string }>('SELECT next_poll_at FROM watches WHERE key_hash = ?', keyHash);
  // Another replica took the key over.
  await t.db.kysely.updateTable('watches').set({ lease_owner: 'replica-b' }).where('key_hash', '=', keyHash).execute();

  await expect(record([offline('evt_lost_1', d1)], t.clock.now() + 10_000)).rejects.toBeInstanceOf(LeaseLostError);
  expect(Number(await t.value('SELECT count(*) AS n FROM events WHERE id = ?', 'evt_lost_1'))).toBe(0);
  expect(Number(await t.value('SELECT count(*) AS n FROM deliveries'))).toBe(0);
  const after = await t.one<{ next_poll_at: number | string; lease_owner: string }>(
    'SELECT next_poll_at, lease_owner FROM watches WHERE key_hash = ?',
    keyHash,
  );
  expect({ next: Number(after!.next_poll_at), owner: after!.lease_owner }).toEqual({ next: Number(watch!.next_poll_at), owner: 'replica-b' });
  const snap = await t.one<{ status: string }>('SELECT status FROM device_snapshots WHERE key_hash = ? AND device_id = ?', keyHash, d1);
  expect(snap?.status).not.toBe('offline');
});

test('a big record (more rows than one statement carries: a mass outage of a big key) is written in slices, with the same result', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const all = await hook('all', {});
  await lease();
  const now = t.clock.now();
  // 600 events: over rowsPerStatement (500), so on PostgreSQL not the one statement.
  const events = Array.from({ length: 600 }, (_, i) =>
    offline(`evt_big_${String(i).padStart(3, '0')}`, `a4:83:e7:2f:${String(Math.floor(i / 100)).padStart(2, '0')}:${String(i % 100).padStart(2, '0')}`),
  );
  const fresh = await record(events, now + 10_000);
  expect(fresh).toHaveLength(600);
  const rows = await t.all<{ fair_at: number | string; event_id: string }>(
    `SELECT d.fair_at, e.id AS event_id FROM deliveries d JOIN events e ON e.seq = d.event_seq WHERE d.hook_id = ? ORDER BY d.fair_at`,
    all,
  );
  expect(rows).toHaveLength(600);
  // Placed one after the other, in the poll's order, from the origin's virtual time (now: no backlog).
  expect(rows.map((r) => [r.event_id, Number(r.fair_at) - Number(rows[0]!.fair_at)])).toEqual(events.map((e, i) => [e.id, i * fairSpacingMs]));
  const watch = await t.one<{ next_poll_at: number | string; lease_owner: string | null }>(
    'SELECT next_poll_at, lease_owner FROM watches WHERE key_hash = ?',
    keyHash,
  );
  expect({ next: Number(watch!.next_poll_at), owner: watch!.lease_owner }).toEqual({ next: now + 10_000, owner: null });
  expect(Number(await t.value(`SELECT count(*) AS n FROM device_snapshots WHERE key_hash = ? AND status = 'offline'`, keyHash))).toBeGreaterThanOrEqual(600);
});

test('records run again and again (on PostgreSQL a prepared statement, planned once for any parameters after its fifth run) write as the first did', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const all = await hook('all', {});
  const one = await hook('one', { device_ids: [d1] });
  const rounds = 12;
  for (let i = 0; i < rounds; i += 1) {
    await lease();
    const event = offline(`evt_m_${String(i).padStart(2, '0')}`, i % 2 === 0 ? d1 : d2);
    expect(await record([event], t.clock.now() + 10_000)).toEqual([event]);
  }
  // A lost lease still writes nothing.
  await lease();
  await t.db.kysely.updateTable('watches').set({ lease_owner: 'replica-b' }).where('key_hash', '=', keyHash).execute();
  await expect(record([offline('evt_m_lost', d1)], t.clock.now() + 10_000)).rejects.toBeInstanceOf(LeaseLostError);

  const rows = await t.all<{ hook_id: string; fair_at: number | string; event_id: string }>(
    `SELECT d.hook_id, d.fair_at, e.id AS event_id FROM deliveries d JOIN events e ON e.seq = d.event_seq ORDER BY d.hook_id, d.fair_at`,
  );
  const of = (hookId: string) => rows.filter((r) => r.hook_id === hookId);
  const ids = Array.from({ length: rounds }, (_, i) => `evt_m_${String(i).padStart(2, '0')}`);
  // `all` got every event, each a fair spacing after the one before (its backlog); `one` those of d1.
  expect(of(all).map((r) => [r.event_id, Number(r.fair_at) - Number(of(all)[0]!.fair_at)])).toEqual(ids.map((id, i) => [id, i * fairSpacingMs]));
  expect(of(one).map((r) => r.event_id)).toEqual(ids.filter((_, i) => i % 2 === 0));
  expect(Number(await t.value('SELECT count(*) AS n FROM events WHERE id = ?', 'evt_m_lost'))).toBe(0);
});

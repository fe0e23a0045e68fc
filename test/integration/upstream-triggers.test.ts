import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { hashKey } from '../../src/auth/keys.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { testEngine } from '../helpers/engine.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { sample, scrape } from '../helpers/metrics.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * Device-status triggers and webhooks in upstream mode (docs/upstream.md, docs/triggers.md, docs/webhooks.md): the connector
 * polls a real upstream on 127.0.0.1:0 (FakeUpstream) with the key it keeps sealed.
 * Two clocks: the upstream decides `is_online` with its own ManualClock (advancing it past
 * 5 minutes takes a device offline; a fresh `last_heartbeat_at` in its database brings it
 * back), while the connector's ManualClock drives key verdicts and webhook timestamps.
 * Both start at the real time, so receivers can verify `webhook-timestamp`.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const secretHex = 'a1'.repeat(32);
const frontCounter = 'a4:83:e7:1f:2b:01';
const fiveMinutes = 5 * 60_000;
/** OPTIONS_CACHE_TTL_MS default: how long a rejected key is answered locally. */
const verdictTtlMs = 30_000;

interface Rig {
  upstream: FakeUpstream;
  /** The upstream's clock: it decides is_online. */
  upClock: ManualClock;
  /** The connector. */
  t: TestApp;
  receiver: Receiver;
}

const rigs: Rig[] = [];
let tmp: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-upstream-triggers-'));
});

afterEach(async () => {
  for (const { t, upstream, receiver } of rigs.splice(0)) {
    await t.close();
    await upstream.stop();
    await receiver.stop();
  }
});

afterAll(async () => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function rig(options: { dataset?: unknown; databasePath?: string; env?: Record<string, string>; logLines?: string[] } = {}): Promise<Rig> {
  const upClock = new ManualClock(Date.now());
  const upstream = await new FakeUpstream(options.dataset ?? catalog(), upClock).start();
  const receiver = await new Receiver().start();
  const t = await buildTestApp({
    clock: new ManualClock(Date.now()),
    databasePath: options.databasePath,
    logLines: options.logLines,
    env: {
      DEVICE_API_URL: upstream.baseUrl,
      MENU_API_URL: upstream.baseUrl,
      UPSTREAM_TIMEOUT_MS: '2000',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      CONNECTOR_SECRET: secretHex,
      ...options.env,
    },
  });
  const r = { upstream, upClock, t, receiver };
  rigs.push(r);
  return r;
}

/** Subscribes a hook for `key` to the rig's receiver (this enrols and baselines the key). */
async function subscribe(r: Rig, key = keys.ana): Promise<{ id: string; secret: string }> {
  const res = await request(r.t.app).post('/v1/hooks').set('X-API-Key', key).send({ target_url: r.receiver.url }).expect(201);
  return res.body;
}

interface WatchRow {
  key_cipher: string | null;
  baseline_at: number | null;
  paused_reason: string | null;
}

async function watchRow(r: Rig, key = keys.ana): Promise<WatchRow | undefined> {
  return r.t.one<WatchRow>('SELECT key_cipher, baseline_at, paused_reason FROM watches WHERE key_hash = ?', hashKey(key));
}

/** Sets a fresh heartbeat (the upstream's "now") on a device in the upstream's catalog. */
async function heartbeat(r: Rig, deviceId: string): Promise<string> {
  const at = formatMicros(r.upClock.now() * 1000);
  const updated = await r.upstream.inner.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ? RETURNING id', at, deviceId);
  expect(updated).toHaveLength(1);
  return at;
}

/** Verifies one received delivery as a Standard Webhooks receiver would. */
function verified(secret: string, index: number, r: Rig): Json {
  const delivery = r.receiver.received[index]!;
  return new Webhook(secret).verify(delivery.body, delivery.headers);
}

describe('enrolment and transitions', () => {
  test('the first trigger call confirms the key, enrols it and records a baseline with one paged GET /devices', async () => {
    const r = await rig();
    const res = await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).set('X-Request-Id', 'req-enrol-1').expect(200);
    expect(res.body).toEqual([]);
    // First the key check (a one-device page, cached like any device read), then the baseline.
    const calls = r.upstream.callsTo('/devices');
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ query: { page: '1', page_size: '1' }, authorization: `Bearer ${keys.ana}`, requestId: 'req-enrol-1' });
    expect(calls[1]).toMatchObject({
      method: 'GET',
      path: '/devices',
      query: { page: '1', page_size: '1000' },
      authorization: `Bearer ${keys.ana}`,
      requestId: 'req-enrol-1',
    });
    expect((await watchRow(r))?.baseline_at).toEqual(expect.any(Number));
    // The baseline is Ana's four devices, stored under the key's hash.
    expect(await r.t.value('SELECT count(*) FROM device_snapshots WHERE key_hash = ?', hashKey(keys.ana))).toBe(4);

    // Already baselined: a second call within the device cache TTL answers from the log without asking the upstream.
    await request(r.t.app).get('/v1/triggers/device-status').set('Authorization', `Bearer ${keys.ana}`).expect(200, []);
    expect(r.upstream.callsTo('/devices')).toHaveLength(2);
    // Nothing changed upstream: a poll round emits nothing.
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 0, failed: 0 });
    const poll = r.upstream.callsTo('/devices')[1]!;
    expect(poll).toMatchObject({ query: { page: '1', page_size: '1000' }, authorization: `Bearer ${keys.ana}` });
    expect(poll.requestId).toEqual(expect.stringMatching(/\S/));
  });

  test("a request's own baseline runs alone: a poll round meanwhile leaves the key to it, and nothing fails", async () => {
    const r = await rig();
    r.upstream.failAlways({ pathPrefix: '/devices', delayMs: 400 });
    const enrolled = request(r.t.app)
      .get('/v1/triggers/device-status')
      .set('X-API-Key', keys.ana)
      .then((res) => res.status);
    for (let i = 0; i < 100 && !r.upstream.callsTo('/devices').some((c) => c.query.page_size === '1000'); i += 1)
      await new Promise((resolve) => setTimeout(resolve, 20));
    // The request holds the key's lease for its baseline: a round now does not poll it beside it
    // (before, both polled and one of them failed with "poll outlived its lease").
    expect(await pollDue(r.t)).toEqual({ keys: 0, events: 0, failed: 0 });
    expect(await enrolled).toBe(200);
    expect((await watchRow(r))?.baseline_at).toEqual(expect.any(Number));
    expect(r.upstream.callsTo('/devices').filter((c) => c.query.page_size === '1000')).toHaveLength(1);
    // Recorded, the lease is let go: the next round polls the key.
    r.upstream.failAlways(null);
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 0, failed: 0 });
  });

  test('a device going offline upstream and coming back gives one signed webhook each', async () => {
    const r = await rig();
    const hook = await subscribe(r);
    expect(r.upstream.callsTo('/devices')).toHaveLength(2); // the key check and the baseline

    // The screen falls silent: its last heartbeat becomes more than 5 minutes old upstream. (Both
    // clocks stay together: a heartbeat ahead of the connector's clock would be taken as the
    // poll's time, docs/triggers.md.)
    const silentSince = formatMicros((r.upClock.now() - fiveMinutes - 1000) * 1000);
    await r.upstream.inner.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', silentSince, frontCounter);
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 1, failed: 0 });
    expect(await r.t.services.deliverer.drain()).toBe(1);
    expect(r.receiver.received).toHaveLength(1);
    const offline = verified(hook.secret, 0, r);
    expect(offline).toMatchObject({
      type: 'device.offline',
      data: { type: 'device.offline', previous_status: 'online', status: 'offline', device: { id: frontCounter, is_online: false } },
    });
    const lastSeen = offline.data.device.last_heartbeat_at as string;
    expect(Date.parse(offline.data.occurred_at)).toBe(Date.parse(lastSeen) + fiveMinutes);
    expect(offline.timestamp).toBe(offline.data.occurred_at);

    // A further round with nothing new emits nothing and sends nothing.
    expect(await pollDue(r.t)).toMatchObject({ events: 0, failed: 0 });
    expect(await r.t.services.deliverer.drain()).toBe(0);

    const fresh = await heartbeat(r, frontCounter);
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 1, failed: 0 });
    await r.t.services.deliverer.drain();
    expect(r.receiver.received).toHaveLength(2);
    const online = verified(hook.secret, 1, r);
    expect(online).toMatchObject({
      type: 'device.online',
      data: { type: 'device.online', previous_status: 'offline', status: 'online', occurred_at: fresh, device: { id: frontCounter, is_online: true } },
    });
    expect(r.receiver.received[1]!.headers['webhook-id']).not.toBe(r.receiver.received[0]!.headers['webhook-id']);

    // The polling trigger shows the same two events, newest first.
    const events = await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
    expect(events.body.map((e: Json) => [e.type, e.id])).toEqual([
      ['device.online', online.data.id],
      ['device.offline', offline.data.id],
    ]);
  });

  // Every row of every table on both engines; the raw database files (and a WAL checkpoint)
  // only on SQLite, where the database is files this process can read.
  test('the upstream key is stored sealed: no table and no database file holds it in plain text', async () => {
    const dir = mkdtempSync(join(tmp, 'sealed-'));
    const r = await rig({ databasePath: join(dir, 'connector.db') });
    const hook = await subscribe(r);
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
    r.upClock.advance(fiveMinutes);
    await pollDue(r.t);
    await r.t.services.deliverer.drain();
    expect(r.receiver.received).toHaveLength(1); // every table has rows: watch, snapshot, event, delivery, attempt

    const watch = (await watchRow(r))!;
    expect(watch).toBeDefined();
    expect(watch.key_cipher).toMatch(/^v1\./);
    expect(watch.key_cipher).not.toContain(keys.ana);
    // It is the key, sealed: the connector can open it (and only that way get it back).
    expect(r.t.services.watches.key({ ...watch, key_hash: hashKey(keys.ana), user_id: null })).toBe(keys.ana);

    const needles = [keys.ana, hook.secret, hook.secret.slice('whsec_'.length)];
    const hits: string[] = [];
    // Every table of the app's database. PostgreSQL: the tables of the app's schema, from the
    // catalog (Kysely's introspector reads every schema of the shared test database, and fails
    // when another run drops one meanwhile).
    const tables =
      testEngine === 'sqlite'
        ? (await r.t.db.kysely.introspection.getTables()).filter((table) => !table.isView).map((table) => table.name)
        : (
            await r.t.all<{ name: string }>(
              `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`,
            )
          ).map((row) => row.name);
    expect(tables).toEqual(expect.arrayContaining(['watches', 'hooks', 'events', 'deliveries', 'delivery_attempts', 'device_snapshots']));
    for (const table of tables) {
      for (const row of (await r.t.all(`SELECT * FROM "${table}"`)) as Array<Record<string, unknown>>) {
        for (const [column, value] of Object.entries(row)) {
          const text = Buffer.isBuffer(value) ? value.toString('latin1') : String(value);
          for (const needle of needles) if (text.includes(needle)) hits.push(`${table}.${column}`);
        }
      }
    }
    expect(hits).toEqual([]);
    if (testEngine !== 'sqlite') return; // PostgreSQL's files belong to its server

    // The raw bytes too: the database, its WAL and shared-memory files, before and after a checkpoint.
    const scanFiles = () => {
      const found: string[] = [];
      for (const name of readdirSync(dir)) {
        const bytes = readFileSync(join(dir, name));
        for (const needle of needles) {
          if (bytes.includes(Buffer.from(needle, 'utf8')) || bytes.includes(Buffer.from(needle, 'utf16le'))) found.push(name);
        }
      }
      return found;
    };
    expect(readdirSync(dir)).toContain('connector.db');
    expect(scanFiles()).toEqual([]);
    await r.t.all('PRAGMA wal_checkpoint(TRUNCATE)');
    expect(scanFiles()).toEqual([]);
  });
});

describe('keys the upstream rejects', () => {
  test('a key rejected during a poll pauses its watch and hooks; the trigger endpoint resumes it once the upstream accepts it', async () => {
    const r = await rig();
    const hook = await subscribe(r);
    r.upstream.failAlways({ pathPrefix: '/devices', status: 401, body: { message: 'Key revoked' } });

    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 0, failed: 1 });
    expect((await watchRow(r))?.paused_reason).toContain('Key revoked');

    // The rejection is remembered for the verdict TTL: answered locally, not re-sent upstream.
    const callsBefore = r.upstream.calls.length;
    await request(r.t.app).get('/v1/hooks').set('X-API-Key', keys.ana).expect(401, { message: 'Key revoked' });
    expect(r.upstream.calls).toHaveLength(callsBefore);

    // After the verdict TTL the connector asks the upstream again before serving its own state
    // (hooks, events) to the key: still revoked, so still 401 — a revoked key reads nothing.
    r.t.clock.advance(verdictTtlMs + 1000);
    await request(r.t.app).get('/v1/hooks').set('X-API-Key', keys.ana).expect(401, { message: 'Key revoked' });
    await request(r.t.app).get('/v1/events').set('X-API-Key', keys.ana).expect(401, { message: 'Key revoked' });
    const stored = await r.t.services.hooks.list(hashKey(keys.ana));
    expect(stored).toEqual([expect.objectContaining({ id: hook.id, status: 'paused', status_reason: expect.stringContaining('Key revoked') })]);
    // The pause by the upstream is a hook.disabled notice in the key's event log (docs/webhooks.md, "Operational events").
    const notices = await r.t.all<{ device_id: string; payload: string }>("SELECT device_id, payload FROM events WHERE type = 'hook.disabled'");
    expect(notices.map((n) => [n.device_id, (JSON.parse(n.payload) as { data: { reason: string } }).data.reason])).toEqual([
      [hook.id, stored[0]!.status_reason],
    ]);
    expect(JSON.stringify(stored)).not.toContain(keys.ana);

    // Paused: later rounds leave the upstream alone (meanwhile the device goes offline upstream).
    r.upClock.advance(fiveMinutes);
    const devicesCalls = r.upstream.callsTo('/devices').length;
    for (let i = 0; i < 3; i += 1) expect(await pollDue(r.t)).toEqual({ keys: 0, events: 0, failed: 0 });
    expect(r.upstream.callsTo('/devices')).toHaveLength(devicesCalls);

    // A trigger call while the upstream still refuses the key relays the 401 and keeps everything paused.
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(401, { message: 'Key revoked' });
    expect((await watchRow(r))?.paused_reason).toContain('Key revoked');
    expect((await r.t.services.hooks.get(hashKey(keys.ana), hook.id)).status).toBe('paused');
    expect(await pollDue(r.t)).toEqual({ keys: 0, events: 0, failed: 0 });

    // The upstream accepts the key again: the next trigger call (after the verdict TTL) resumes the watch.
    r.upstream.failAlways(null);
    r.t.clock.advance(verdictTtlMs + 1000);
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
    expect((await watchRow(r))?.paused_reason).toBeNull();
    const resumed = await request(r.t.app).get('/v1/hooks').set('X-API-Key', keys.ana).expect(200);
    expect(resumed.body).toEqual([expect.objectContaining({ id: hook.id, status: 'active', status_reason: null })]);

    // Polling goes on, and the transition that happened while paused is not lost.
    expect(await pollDue(r.t)).toMatchObject({ keys: 1, failed: 0 });
    await r.t.services.deliverer.drain();
    expect(r.receiver.received).toHaveLength(1);
    expect(verified(hook.secret, 0, r)).toMatchObject({ type: 'device.offline', data: { device: { id: frontCounter } } });
  });

  test('an upstream 503 during a poll pauses nothing, and the next round catches up', async () => {
    const r = await rig({ env: { UPSTREAM_RETRIES: '1' } });
    const hook = await subscribe(r);
    r.upClock.advance(fiveMinutes);
    r.upstream.failAlways({ pathPrefix: '/devices', status: 503, body: { message: 'Service unavailable' } });

    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 0, failed: 1 });
    expect(r.upstream.callsTo('/devices').length).toBeGreaterThanOrEqual(2); // the baseline + the failed round
    expect((await watchRow(r))?.paused_reason).toBeNull();
    const listed = await request(r.t.app).get('/v1/hooks').set('X-API-Key', keys.ana).expect(200);
    expect(listed.body).toEqual([expect.objectContaining({ status: 'active', status_reason: null })]);
    expect(await r.t.services.deliverer.drain()).toBe(0);

    r.upstream.failAlways(null);
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 1, failed: 0 });
    await r.t.services.deliverer.drain();
    expect(r.receiver.received).toHaveLength(1);
    expect(verified(hook.secret, 0, r)).toMatchObject({ type: 'device.offline', data: { device: { id: frontCounter } } });
  });

  test('a key rejected at the first trigger call gets the upstream 401 relayed and no watch is kept', async () => {
    const r = await rig();
    r.upstream.failNext({ pathPrefix: '/devices', status: 401, body: { message: 'Key revoked' } });
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(401, { message: 'Key revoked' });
    expect(await watchRow(r)).toBeUndefined();
    expect(await r.t.value('SELECT count(*) FROM device_snapshots')).toBe(0);
    expect(r.upstream.callsTo('/devices')).toHaveLength(1);
    // Remembered for the verdict TTL: the second call is answered without the upstream.
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(401, { message: 'Key revoked' });
    expect(r.upstream.callsTo('/devices')).toHaveLength(1);
    expect(await pollDue(r.t)).toEqual({ keys: 0, events: 0, failed: 0 });
    expect(r.upstream.callsTo('/devices')).toHaveLength(1);
  });

  test('a subscription with a key the upstream does not know is refused and keeps neither hook nor watch', async () => {
    const r = await rig();
    const unknown = 'sk_test_nobody_knows_this_key_00';
    await request(r.t.app).post('/v1/hooks').set('X-API-Key', unknown).send({ target_url: r.receiver.url }).expect(401, { message: 'Invalid API key' });
    expect(r.upstream.callsTo('/devices')[0]?.authorization).toBe(`Bearer ${unknown}`);
    expect(await r.t.value('SELECT count(*) FROM hooks')).toBe(0);
    expect(await watchRow(r, unknown)).toBeUndefined();
  });

  test('a key the upstream refuses device access (403) gets the 403 relayed and no watch is kept', async () => {
    const r = await rig();
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.anaMenuOnly).expect(403, { message: 'Invalid scopes' });
    expect(await watchRow(r, keys.anaMenuOnly)).toBeUndefined();
    expect(await pollDue(r.t)).toEqual({ keys: 0, events: 0, failed: 0 });
  });
});

/** The fixture catalog with exactly `count` devices, all visible to Ana (read access). */
function catalogWithDevices(count: number) {
  const base = catalog();
  const template = base.devices[0]!;
  const hex = (n: number) => n.toString(16).padStart(2, '0');
  const devices = Array.from({ length: count }, (_, i) => ({
    ...template,
    id: `c0:ff:ee:00:${hex(i >> 8)}:${hex(i & 255)}`,
    name: `Screen ${i + 1}`,
    access: [{ user_id: 'usr_ana', level: 'read' as const }],
  }));
  return { ...base, devices };
}

describe('paging', () => {
  test('with 2,500 upstream devices every poll makes exactly 3 GET /devices with page_size=1000', async () => {
    const r = await rig({ dataset: catalogWithDevices(2500) });
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200, []);
    const pagesOf = (calls: typeof r.upstream.calls) =>
      calls
        .filter((c) => c.query.page_size === '1000')
        .map((c) => c.query.page)
        .sort();
    expect(pagesOf(r.upstream.callsTo('/devices'))).toEqual(['1', '2', '3']);
    expect(await r.t.value('SELECT count(*) FROM device_snapshots')).toBe(2500);

    for (let round = 0; round < 10; round += 1) {
      r.upstream.calls.length = 0;
      expect(await pollDue(r.t)).toEqual({ keys: 1, events: 0, failed: 0 });
      const calls = r.upstream.callsTo('/devices');
      expect(calls).toHaveLength(3);
      expect(pagesOf(calls)).toEqual(['1', '2', '3']);
      for (const call of calls) {
        expect(call).toMatchObject({ path: '/devices', query: expect.objectContaining({ page_size: '1000' }), authorization: `Bearer ${keys.ana}` });
      }
    }
    expect(r.upstream.calls.every((c) => c.path === '/devices')).toBe(true);
  });

  test('a baseline that lost its lease to another replica writes no further slice', async () => {
    const r = await rig({ dataset: catalogWithDevices(2500) });
    const keyHash = hashKey(keys.ana);
    // The request's own baseline fails at page 3: the key stays unbaselined, due again at once.
    r.upstream.failAlways({ pathPrefix: '/devices', page: '3', status: 503 });
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(502);
    await r.t.all('DELETE FROM device_snapshots');
    // Now page 2 is slow: the background baseline writes page 1's slice, then another replica
    // takes the key over (this poll's lease ran out) before page 2 arrives.
    r.upstream.failAlways({ pathPrefix: '/devices', page: '2', delayMs: 1500 });
    const round = pollDue(r.t);
    const count = async () => Number(await r.t.value('SELECT count(*) FROM device_snapshots WHERE key_hash = ?', keyHash));
    for (let i = 0; i < 100 && (await count()) < 1000; i += 1) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await count()).toBe(1000);
    await r.t.all("UPDATE watches SET lease_owner = 'replica-x', leased_until = ? WHERE key_hash = ?", Date.now() + 60_000, keyHash);
    expect(await round).toEqual({ keys: 1, events: 0, failed: 1 });
    // Nothing more from the stale poll, and the key stays the other replica's.
    expect(await count()).toBe(1000);
    expect(await watchRow(r)).toMatchObject({ baseline_at: null });
    expect(await r.t.value('SELECT lease_owner FROM watches WHERE key_hash = ?', keyHash)).toBe('replica-x');
  });

  test('a baseline cut off part way keeps the slices it wrote, and the next poll is a baseline again: no event from it', async () => {
    const r = await rig({ dataset: catalogWithDevices(2500) });
    // Page 3 fails every retry: the first two pages were compared and written in slices.
    r.upstream.failAlways({ pathPrefix: '/devices', page: '3', status: 503 });
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(502);
    expect(await r.t.value('SELECT count(*) FROM device_snapshots WHERE key_hash = ?', hashKey(keys.ana))).toBe(2000);
    expect((await watchRow(r))?.baseline_at).toBeNull();

    // Every device goes offline before the next poll: still a baseline, so nothing is emitted.
    r.upstream.failAlways(null);
    r.upClock.advance(fiveMinutes + 1000);
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 0, failed: 0 });
    expect(await r.t.value('SELECT count(*) FROM device_snapshots WHERE key_hash = ?', hashKey(keys.ana))).toBe(2500);
    expect(await r.t.value("SELECT count(*) FROM device_snapshots WHERE status = 'offline'")).toBe(2500);
    expect((await watchRow(r))?.baseline_at).toEqual(expect.any(Number));
    expect(await r.t.value('SELECT count(*) FROM events')).toBe(0);

    // From here on, changes are events as usual.
    await heartbeat(r, 'c0:ff:ee:00:09:c3');
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 1, failed: 0 });
  });
});

describe('an invalid upstream record is never an event', () => {
  const screenA = 'c0:ff:ee:00:00:00';
  const screenB = 'c0:ff:ee:00:00:01';
  const impossible = '2026-02-30T10:00:00.000000Z';
  const leftOut = 'upstream record does not match the interface; left out of the answer';

  /** Screen B's record, as the upstream sends it, made invalid; its status flipped from what the snapshot holds. */
  const breakScreenB = (r: Rig) => {
    r.upstream.rewriteDevice = (d) => (String(d.id).toLowerCase() === screenB ? { ...d, last_heartbeat_at: impossible, is_online: false } : d);
  };
  const snapshotRows = (r: Rig) =>
    r.t.all<{ device_id: string; status: string }>('SELECT device_id, status FROM device_snapshots WHERE key_hash = ? ORDER BY device_id', hashKey(keys.ana));
  const warned = (lines: string[]) => lines.map((l) => JSON.parse(l) as Json).filter((l) => l.msg === leftOut);
  const eventsOf = async (r: Rig) =>
    (await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200)).body.map((e: Json) => [e.type, e.device.id]);

  test('one device invalid while the other goes offline: one event, the bad one logged and counted, the good one served; back valid, it is compared with its last valid status', async () => {
    const lines: string[] = [];
    const r = await rig({ dataset: catalogWithDevices(2), logLines: lines, env: { LOG_LEVEL: 'warn' } });
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200, []);
    expect(await snapshotRows(r)).toEqual([
      { device_id: screenA, status: 'online' },
      { device_id: screenB, status: 'online' },
    ]);

    // Both go offline upstream; B's record is unreadable this time.
    r.upClock.advance(fiveMinutes);
    breakScreenB(r);
    const before = sample((await scrape(r.t.app)).samples, 'upstream_records_rejected_total', { area: 'device', resource: 'device' });
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 1, failed: 0 });
    expect(await eventsOf(r)).toEqual([['device.offline', screenA]]);
    expect(warned(lines)).toEqual([
      expect.objectContaining({ level: 40, area: 'device', resource: 'device', id: screenB.toUpperCase(), field: 'last_heartbeat_at' }),
    ]);
    expect(sample((await scrape(r.t.app)).samples, 'upstream_records_rejected_total', { area: 'device', resource: 'device' })).toBe(before + 1);
    // B keeps its last valid status in the snapshot: unreadable is not gone.
    expect(await snapshotRows(r)).toEqual([
      { device_id: screenA, status: 'offline' },
      { device_id: screenB, status: 'online' },
    ]);

    // The list and the dropdown serve A, and only A.
    const list = await request(r.t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(200);
    expect(list.body.data.map((d: Json) => [d.id, d.is_online])).toEqual([[screenA.toUpperCase(), false]]);
    const dropdown = await request(r.t.app).get('/v1/devices/options').set('X-API-Key', keys.ana).expect(200);
    expect(dropdown.body).toEqual([['Screen 1', screenA]]);

    // B comes back valid with its old status (a fresh heartbeat: online): nothing to tell.
    await heartbeat(r, screenB);
    r.upstream.rewriteDevice = null;
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 0, failed: 0 });
    expect(await snapshotRows(r)).toEqual([
      { device_id: screenA, status: 'offline' },
      { device_id: screenB, status: 'online' },
    ]);

    // B unreadable again, and meanwhile really offline: when it is readable again, that change
    // (from its last valid status) is one event, not lost as a new baseline.
    breakScreenB(r);
    r.upClock.advance(fiveMinutes);
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 0, failed: 0 });
    r.upstream.rewriteDevice = null;
    expect(await pollDue(r.t)).toEqual({ keys: 1, events: 1, failed: 0 });
    expect(await eventsOf(r)).toEqual([
      ['device.offline', screenB],
      ['device.offline', screenA],
    ]);
    expect(await snapshotRows(r)).toEqual([
      { device_id: screenA, status: 'offline' },
      { device_id: screenB, status: 'offline' },
    ]);
  });

  test('the same invalid record in every poll is counted every time and logged at warn once per 10 minutes', async () => {
    const lines: string[] = [];
    const r = await rig({ dataset: catalogWithDevices(2), logLines: lines, env: { LOG_LEVEL: 'warn' } });
    await request(r.t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200, []);
    const rejected = async () => sample((await scrape(r.t.app)).samples, 'upstream_records_rejected_total', { area: 'device', resource: 'device' });
    const logged = () => warned(lines).map((l) => [l.id, l.field]);
    const before = await rejected();

    breakScreenB(r);
    await pollDue(r.t);
    await pollDue(r.t);
    expect(logged()).toEqual([[screenB.toUpperCase(), 'last_heartbeat_at']]);
    expect(await rejected()).toBe(before + 2);

    // Another record, or another field of the same one, is another line.
    r.upstream.rewriteDevice = (d) => {
      const id = String(d.id).toLowerCase();
      if (id === screenB) return { ...d, last_heartbeat_at: impossible };
      return id === screenA ? { ...d, name: null } : d;
    };
    await pollDue(r.t);
    await pollDue(r.t);
    expect(logged()).toEqual([
      [screenB.toUpperCase(), 'last_heartbeat_at'],
      [screenA.toUpperCase(), 'name'],
    ]);
    expect(await rejected()).toBe(before + 6);

    // Ten minutes after its line, a record still invalid is logged again.
    r.t.clock.advance(10 * 60_000);
    await pollDue(r.t);
    expect(logged()).toHaveLength(4);
    expect(logged().slice(2).sort()).toEqual([
      [screenA.toUpperCase(), 'name'],
      [screenB.toUpperCase(), 'last_heartbeat_at'],
    ]);
    expect(await rejected()).toBe(before + 8);
    expect(await pollDue(r.t)).toMatchObject({ events: 0, failed: 0 });
    expect(logged()).toHaveLength(4);
  });
});

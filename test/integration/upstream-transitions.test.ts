import { afterEach, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { hashKey } from '../../src/auth/keys.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * Transitions from an upstream that behaves as real ones do (docs/triggers.md, "Transitions
 * from an upstream"): devices left out of listings, heartbeats from a clock ahead, a status
 * flapping while the heartbeat stays, pages that come back empty or short in the middle of a
 * listing. The connector polls a real upstream on 127.0.0.1:0 (FakeUpstream); `rewriteDevice`
 * changes or drops records in its answers.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const frontCounter = 'a4:83:e7:1f:2b:01';
const fiveMinutes = 5 * 60_000;
const weekMs = 7 * 86_400_000;

interface Rig {
  upstream: FakeUpstream;
  upClock: ManualClock;
  t: TestApp;
  receiver: Receiver;
}

const rigs: Rig[] = [];

afterEach(async () => {
  for (const { t, upstream, receiver } of rigs.splice(0)) {
    await t.close();
    await upstream.stop();
    await receiver.stop();
  }
});

async function rig(options: { dataset?: unknown; logLines?: string[] } = {}): Promise<Rig> {
  const upClock = new ManualClock(Date.now());
  const upstream = await new FakeUpstream(options.dataset ?? catalog(), upClock).start();
  const receiver = await new Receiver().start();
  const t = await buildTestApp({
    clock: new ManualClock(Date.now()),
    logLines: options.logLines,
    env: {
      DEVICE_API_URL: upstream.baseUrl,
      MENU_API_URL: upstream.baseUrl,
      UPSTREAM_TIMEOUT_MS: '2000',
      UPSTREAM_RETRIES: '0',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      CONNECTOR_SECRET: 'a1'.repeat(32),
      ...(options.logLines ? { LOG_LEVEL: 'warn' } : {}),
    },
  });
  const r = { upstream, upClock, t, receiver };
  rigs.push(r);
  // A hook keeps the key watched whatever the connector's clock says; subscribing baselines it.
  await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: receiver.url }).expect(201);
  return r;
}

const poll = (r: Rig) => pollDue(r.t);

async function events(r: Rig): Promise<Json[]> {
  return (await request(r.t.app).get('/v1/events').set('X-API-Key', keys.ana).expect(200)).body;
}

const snapshotOf = (r: Rig, deviceId: string) =>
  r.t.one<{ status: string; missing_since: unknown }>(
    'SELECT status, missing_since FROM device_snapshots WHERE key_hash = ? AND device_id = ?',
    hashKey(keys.ana),
    deviceId,
  );

/** Rewrites one device's record in every upstream answer (null: leaves it out of the listings). */
function rewrite(r: Rig, deviceId: string, change: ((d: Record<string, unknown>) => Record<string, unknown> | null) | null): void {
  r.upstream.rewriteDevice = change === null ? null : (d) => (String(d.id).toLowerCase() === deviceId ? change(d) : d);
}

describe('a device left out of listings', () => {
  test('back after two listings with another status: one event, compared with what was last known of it', async () => {
    const r = await rig();
    rewrite(r, frontCounter, () => null);
    expect(await poll(r)).toEqual({ keys: 1, events: 0, failed: 0 });
    expect(await poll(r)).toEqual({ keys: 1, events: 0, failed: 0 });
    // Kept, marked missing: what was last known of it.
    expect(await snapshotOf(r, frontCounter)).toMatchObject({ status: 'online', missing_since: expect.anything() });
    expect(await snapshotOf(r, frontCounter)).not.toMatchObject({ missing_since: null });

    // Meanwhile it went offline upstream; listed again, that change is an event.
    r.upClock.advance(fiveMinutes);
    rewrite(r, frontCounter, null);
    expect(await poll(r)).toEqual({ keys: 1, events: 1, failed: 0 });
    expect((await events(r)).map((e) => [e.type, e.device.id, e.previous_status])).toEqual([['device.offline', frontCounter, 'online']]);
    expect(await snapshotOf(r, frontCounter)).toMatchObject({ status: 'offline', missing_since: null });
    // Listed as it was: nothing more.
    expect(await poll(r)).toEqual({ keys: 1, events: 0, failed: 0 });
  });

  test('back with the same status: no event; missing longer than the retention: forgotten, so its return is a first sighting', async () => {
    const r = await rig();
    rewrite(r, frontCounter, () => null);
    await poll(r);
    rewrite(r, frontCounter, null);
    expect(await poll(r)).toEqual({ keys: 1, events: 0, failed: 0 });
    expect(await snapshotOf(r, frontCounter)).toMatchObject({ status: 'online', missing_since: null });

    rewrite(r, frontCounter, () => null);
    await poll(r);
    r.t.clock.advance(weekMs + 60_000);
    await poll(r);
    await r.t.services.retention.runOnce(); // the sweep prunes rows missing past the retention
    expect(await snapshotOf(r, frontCounter)).toBeUndefined();
    r.upClock.advance(fiveMinutes);
    rewrite(r, frontCounter, null);
    expect(await poll(r)).toEqual({ keys: 1, events: 0, failed: 0 });
    expect(await snapshotOf(r, frontCounter)).toMatchObject({ status: 'offline', missing_since: null });
  });
});

describe('a heartbeat in the future', () => {
  test("is taken as the poll's time, with one warn line naming the device", async () => {
    const lines: string[] = [];
    const r = await rig({ logLines: lines });
    const ahead = formatMicros((r.upClock.now() + 3_600_000) * 1000);
    rewrite(r, frontCounter, (d) => ({ ...d, last_heartbeat_at: ahead, is_online: false }));
    expect(await poll(r)).toEqual({ keys: 1, events: 1, failed: 0 });
    const [offline] = await events(r);
    expect(offline).toMatchObject({
      type: 'device.offline',
      occurred_at: formatMicros(r.t.clock.now() * 1000),
      device: { id: frontCounter, last_heartbeat_at: ahead },
    });
    const warned = () => lines.map((l) => JSON.parse(l) as Json).filter((l) => l.level === 40 && /heartbeat in the future/.test(l.msg));
    expect(warned()).toEqual([expect.objectContaining({ deviceId: frontCounter, heartbeat: ahead })]);

    // Back online with the same heartbeat a minute later: dated then, and the line is not repeated (rate-limited).
    r.t.clock.advance(60_000);
    rewrite(r, frontCounter, (d) => ({ ...d, last_heartbeat_at: ahead, is_online: true }));
    expect(await poll(r)).toEqual({ keys: 1, events: 1, failed: 0 });
    expect((await events(r))[1]).toMatchObject({ type: 'device.online', occurred_at: formatMicros(r.t.clock.now() * 1000) });
    expect(warned()).toHaveLength(1);
  });
});

describe('a status flapping while the heartbeat stays', () => {
  /** Offline, online, offline, online with one heartbeat; the log's events. */
  async function flap(r: Rig, heartbeat: string): Promise<Json[]> {
    for (const online of [false, true, false, true]) {
      rewrite(r, frontCounter, (d) => ({ ...d, last_heartbeat_at: heartbeat, is_online: online }));
      expect(await poll(r)).toEqual({ keys: 1, events: 1, failed: 0 });
    }
    return events(r);
  }

  test('is four events with four ids, never dated backwards, and the same ids when observed again elsewhere', async () => {
    const heartbeat = formatMicros((Date.now() - 10 * 60_000) * 1000);
    const first = await flap(await rig(), heartbeat);
    expect(first.map((e) => e.type)).toEqual(['device.offline', 'device.online', 'device.offline', 'device.online']);
    expect(new Set(first.map((e) => e.id)).size).toBe(4);
    const dates = first.map((e) => e.occurred_at as string);
    expect(dates).toEqual([...dates].sort());
    expect(dates[0]).toBe(formatMicros((Date.parse(heartbeat) + fiveMinutes) * 1000));

    // Another connector (a replica, or this one after a restart) deciding the same transitions
    // from the same snapshot mints the same ids.
    const again = await flap(await rig(), heartbeat);
    expect(again.map((e) => e.id)).toEqual(first.map((e) => e.id));
  });
});

/** The fixture catalog with exactly `count` devices, all visible to Ana. */
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

describe('a page empty or short in the middle of a listing', () => {
  const missing = (r: Rig) => r.t.value('SELECT count(*) FROM device_snapshots WHERE missing_since IS NOT NULL');

  test('fails the poll, logged, drops no device, and the next poll goes on as usual', async () => {
    const lines: string[] = [];
    const r = await rig({ dataset: catalogWithDevices(2500), logLines: lines });
    expect(Number(await r.t.value('SELECT count(*) FROM device_snapshots'))).toBe(2500);
    const failedLines = () => lines.map((l) => JSON.parse(l) as Json).filter((l) => l.msg === 'poll failed; will retry next interval');

    // Page 2 of 3 comes back empty, the total unchanged.
    r.upstream.failNext({ pathPrefix: '/devices', page: '2', answer: () => ({ total: 2500, data: [] }) });
    expect(await poll(r)).toEqual({ keys: 1, events: 0, failed: 1 });
    expect(Number(await missing(r))).toBe(0);
    expect(failedLines()).toEqual([
      expect.objectContaining({ details: [expect.objectContaining({ path: 'page', message: expect.stringContaining('page 2 of 3 held 0 devices') })] }),
    ]);

    // Page 2 short: 500 of its devices left out.
    r.upstream.rewriteDevice = (d) => (/^c0:ff:ee:00:0[45]:/i.test(String(d.id)) ? null : d);
    expect(await poll(r)).toEqual({ keys: 1, events: 0, failed: 1 });
    expect(Number(await missing(r))).toBe(0);
    expect(failedLines()).toHaveLength(2);

    // Whole again: the poll succeeds, and a device that went offline meanwhile is one event.
    r.upstream.rewriteDevice = (d) => (String(d.id).toLowerCase() === 'c0:ff:ee:00:04:00' ? { ...d, is_online: false } : d);
    expect(await poll(r)).toEqual({ keys: 1, events: 1, failed: 0 });
    expect(Number(await missing(r))).toBe(0);
  });
});

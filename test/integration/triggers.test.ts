import { afterEach, beforeEach, describe, expect, jest, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { eventId } from '../../src/triggers/transitions.js';
import { formatMicros } from '../../src/time/timestamps.js';

// Embedded mode, docs/triggers.md. The fixture clock starts at 2026-06-01T12:00:00Z; the heartbeat
// timeout is the default 5 minutes. Ana sees 01 (online, heartbeat 30 s ago), 02 (offline 3 days),
// 03 (never seen) and 05 (heartbeat 10 min ago: offline). Ben sees 01, 04 (online) and 05.
// Zoe (another account) sees only b0:00:00:00:00:01 (online).
const dev01 = 'a4:83:e7:1f:2b:01';
const dev03 = 'a4:83:e7:1f:2b:03';
const dev04 = 'a4:83:e7:1f:2b:04';
const zoeDevice = 'b0:00:00:00:00:01';
const timeoutMs = 300_000;

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp({ dataset: catalog() });
});
afterEach(async () => {
  await t.close();
});

const get = (path: string, key: string = keys.ana) => request(t.app).get(path).set('X-API-Key', key);

interface Event {
  id: string;
  type: string;
  occurred_at: string;
  device: { id: string; last_heartbeat_at: string | null; is_online: boolean };
  previous_status: string;
  status: string;
}

/** A heartbeat `agoMs` before the test clock, with microseconds that must survive. */
async function heartbeat(deviceId: string, agoMs: number, micros = 123): Promise<string> {
  const text = formatMicros((t.clock.now() - agoMs) * 1000 + micros);
  await t.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', text, deviceId);
  return text;
}

/** Enrols Ana, lets device 01 time out, polls: one device.offline event. */
async function offlineEvent(): Promise<Event> {
  await get('/v1/triggers/device-status').expect(200, []);
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);
  const res = await get('/v1/triggers/device-status').expect(200);
  expect(res.body).toHaveLength(1);
  return res.body[0] as Event;
}

describe('GET /v1/triggers/device-status', () => {
  test('the first call enrols the key and returns [] although devices are offline (baseline)', async () => {
    const res = await get('/v1/triggers/device-status').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual([]);
    expect(await pollDue(t)).toMatchObject({ keys: 1, events: 0, failed: 0 });
    await get('/v1/triggers/device-status').expect(200, []);
    await get('/v1/events').expect(200, []);
  });

  test('a device that times out → exactly one device.offline event in the shape of docs/triggers.md', async () => {
    const before = (await t.one('SELECT last_heartbeat_at FROM devices WHERE id = ?', dev01)) as { last_heartbeat_at: string };
    const event = await offlineEvent();
    expect(Object.keys(event).sort()).toEqual(['device', 'id', 'occurred_at', 'previous_status', 'status', 'type']);
    expect(event).toMatchObject({ type: 'device.offline', previous_status: 'online', status: 'offline' });
    expect(event.device).toMatchObject({ id: dev01, name: 'Front counter', is_online: false, last_heartbeat_at: before.last_heartbeat_at });
    expect(event.occurred_at).toBe(formatMicros(Date.parse(before.last_heartbeat_at) * 1000 + timeoutMs * 1000));
    expect(event.id).toBe(eventId(dev01, 'device.offline', before.last_heartbeat_at));

    expect((await pollDue(t)).events).toBe(0);
    t.clock.advance(60_000);
    expect((await pollDue(t)).events).toBe(0);
    await get('/v1/triggers/device-status')
      .expect(200)
      .expect((res) => expect(res.body).toEqual([event]));
  });

  test('occurred_at of the offline event keeps the heartbeat microseconds', async () => {
    const hb = await heartbeat(dev01, 10_000, 654_321);
    await get('/v1/triggers/device-status').expect(200, []);
    t.clock.advance(timeoutMs);
    await pollDue(t);
    const [event] = (await get('/v1/triggers/device-status').expect(200)).body as Event[];
    expect(hb).toMatch(/\.\d{3}321Z$/);
    expect(event!.occurred_at).toBe(formatMicros(Date.parse(hb) * 1000 + 321 + timeoutMs * 1000));
    expect(event!.occurred_at.slice(-7)).toBe(hb.slice(-7));
  });

  test('a fresh heartbeat → device.online with occurred_at = that heartbeat; newest first', async () => {
    const offline = await offlineEvent();
    t.clock.advance(60_000);
    const hb = await heartbeat(dev01, 2_000, 456);
    expect((await pollDue(t)).events).toBe(1);
    const list = (await get('/v1/triggers/device-status').expect(200)).body as Event[];
    expect(list.map((e) => e.type)).toEqual(['device.online', 'device.offline']);
    const online = list[0]!;
    expect(online).toMatchObject({ type: 'device.online', occurred_at: hb, previous_status: 'offline', status: 'online' });
    expect(online.device).toMatchObject({ id: dev01, is_online: true, last_heartbeat_at: hb });
    expect(online.id).toBe(eventId(dev01, 'device.online', hb, offline.id)); // chained on the device's previous event
    expect(list[1]).toEqual(offline);
    // Staying online with newer heartbeats emits nothing more.
    t.clock.advance(30_000);
    await heartbeat(dev01, 1_000);
    expect((await pollDue(t)).events).toBe(0);
  });

  test('a never-seen device that sends its first heartbeat → device.online', async () => {
    await get('/v1/triggers/device-status').expect(200, []);
    const hb = await heartbeat(dev03, 1_000);
    await pollDue(t);
    const list = (await get('/v1/triggers/device-status').expect(200)).body as Event[];
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({ type: 'device.online', occurred_at: hb, previous_status: 'offline', status: 'online' });
    expect(list[0]!.device.id).toBe(dev03);
  });

  test('a device that appears after the baseline is itself a baseline (no event)', async () => {
    await get('/v1/triggers/device-status').expect(200, []);
    await t.all(`INSERT INTO device_access (device_id, user_id, level) VALUES (?, 'usr_ana', 'read')`, dev04);
    expect((await pollDue(t)).events).toBe(0);
    t.clock.advance(timeoutMs);
    // Now both 01 and the newly visible 04 time out.
    expect((await pollDue(t)).events).toBe(2);
  });

  describe('filters', () => {
    let offline: Event;
    let online: Event;
    beforeEach(async () => {
      offline = await offlineEvent();
      await heartbeat(dev03, 1_000);
      await pollDue(t);
      online = ((await get('/v1/triggers/device-status?type=device.online').expect(200)).body as Event[])[0]!;
    });

    test('type: one type, both types (comma-separated, spaces tolerated)', async () => {
      expect(online).toMatchObject({ type: 'device.online', device: { id: dev03 } });
      const off = (await get('/v1/triggers/device-status?type=device.offline').expect(200)).body as Event[];
      expect(off).toEqual([offline]);
      const both = (await get('/v1/triggers/device-status?type=device.offline,%20device.online').expect(200)).body as Event[];
      expect(both.map((e) => e.id)).toEqual([online.id, offline.id]);
    });

    test.each(['device.foo', 'device.offline,bogus', '', ','])('type=%s → 400 naming type', async (value) => {
      const res = await get(`/v1/triggers/device-status?type=${encodeURIComponent(value)}`).expect(400);
      expect(res.body.message).toMatch(/type/);
      expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: 'type' })]));
    });

    test('devices: ids, case-insensitive, comma-separated', async () => {
      const one = (await get(`/v1/triggers/device-status?devices=${dev01.toUpperCase()}`).expect(200)).body as Event[];
      expect(one).toEqual([offline]);
      const three = (await get(`/v1/triggers/device-status?devices=${dev03}`).expect(200)).body as Event[];
      expect(three).toEqual([online]);
      const both = (await get(`/v1/triggers/device-status?devices=${dev01},${dev03}`).expect(200)).body as Event[];
      expect(both).toHaveLength(2);
      await get('/v1/triggers/device-status?devices=ff:ff:ff:ff:ff:ff').expect(200, []);
      const combined = (await get(`/v1/triggers/device-status?devices=${dev01}&type=device.online`).expect(200)).body;
      expect(combined).toEqual([]);
    });

    test('limit: 1–500, newest first', async () => {
      const first = (await get('/v1/triggers/device-status?limit=1').expect(200)).body as Event[];
      expect(first).toEqual([online]);
      await get('/v1/triggers/device-status?limit=500').expect(200);
      for (const bad of ['0', '501', '-1', 'abc', '1.5']) {
        const res = await get(`/v1/triggers/device-status?limit=${bad}`).expect(400);
        expect(res.body.details).toEqual([expect.objectContaining({ path: 'limit' })]);
        expect(res.body.message).toMatch(/limit/);
      }
    });

    test('unknown query parameters are ignored', async () => {
      const res = await get('/v1/triggers/device-status?foo=bar').expect(200);
      expect(res.body).toHaveLength(2);
    });
  });

  test('the default limit is 50', async () => {
    await get('/v1/triggers/device-status').expect(200, []);
    // 30 round trips of device 01 going offline and coming back: 60 events.
    for (let i = 0; i < 30; i += 1) {
      t.clock.advance(timeoutMs + 1_000);
      await pollDue(t);
      await heartbeat(dev01, 0, i);
      await pollDue(t);
    }
    const all = (await get('/v1/events?limit=500').expect(200)).body as Event[];
    expect(all).toHaveLength(60);
    const page = (await get('/v1/triggers/device-status').expect(200)).body as Event[];
    expect(page).toHaveLength(50);
    expect(page.map((e) => e.id)).toEqual(
      all
        .slice(-50)
        .reverse()
        .map((e) => e.id),
    );
    expect(new Set(all.map((e) => e.id)).size).toBe(60);
  });
});

describe('GET /v1/events (replay)', () => {
  let offline: Event;
  let online: Event;
  beforeEach(async () => {
    offline = await offlineEvent();
    t.clock.advance(1_000);
    await heartbeat(dev01, 0);
    await pollDue(t);
    online = ((await get('/v1/triggers/device-status?type=device.online').expect(200)).body as Event[])[0]!;
  });

  test('oldest first; the polling trigger lists the same events newest first', async () => {
    const replay = (await get('/v1/events').expect(200)).body as Event[];
    expect(replay).toEqual([offline, online]);
    const trigger = (await get('/v1/triggers/device-status').expect(200)).body as Event[];
    expect(trigger.map((e) => e.id)).toEqual(replay.map((e) => e.id).reverse());
    expect(trigger).toEqual([...replay].reverse());
  });

  test('after=<id> returns only later events', async () => {
    expect((await get(`/v1/events?after=${offline.id}`)).body).toEqual([online]);
    expect((await get(`/v1/events?after=${online.id}`).expect(200)).body).toEqual([]);
  });

  test('an unknown after → 400 naming after', async () => {
    const res = await get('/v1/events?after=evt_00000000000000000000000000000000').expect(400);
    expect(res.body.message).toMatch(/after/);
    expect(res.body.details).toEqual([expect.objectContaining({ path: 'after' })]);
  });

  test('limit: oldest first, 1–500', async () => {
    expect((await get('/v1/events?limit=1').expect(200)).body).toEqual([offline]);
    for (const bad of ['0', '501', 'x']) {
      const res = await get(`/v1/events?limit=${bad}`).expect(400);
      expect(res.body.details).toEqual([expect.objectContaining({ path: 'limit' })]);
    }
  });
});

describe('GET /v1/triggers/device-status/sample', () => {
  test('sample events built from the key\'s own devices, each with "sample": true', async () => {
    const res = await get('/v1/triggers/device-status/sample').expect(200);
    const list = res.body as Array<Event & { sample: boolean }>;
    expect(list.length).toBeGreaterThan(0);
    expect(list.length).toBeLessThanOrEqual(4);
    const anaDevices = ['a4:83:e7:1f:2b:01', 'a4:83:e7:1f:2b:02', 'a4:83:e7:1f:2b:03', 'a4:83:e7:1f:2b:05'];
    for (const e of list) {
      expect(e.sample).toBe(true);
      expect(anaDevices).toContain(e.device.id);
      expect(['device.offline', 'device.online']).toContain(e.type);
      expect(e.status).toBe(e.type === 'device.online' ? 'online' : 'offline');
      expect(e.previous_status).not.toBe(e.status);
      expect(typeof e.id).toBe('string');
      expect(typeof e.occurred_at).toBe('string');
    }
    const zoe = (await get('/v1/triggers/device-status/sample', keys.zoe).expect(200)).body as Event[];
    expect(zoe.map((e) => [e.device.id, e.type])).toEqual([
      [zoeDevice, 'device.online'],
      [zoeDevice, 'device.offline'],
    ]);
    expect(zoe[0]).toMatchObject({ type: 'device.online', sample: true });
  });

  /** Each sample reads as the event it stands for: status, previous status and device state agree. */
  function expectConsistent(list: Array<Event & { sample: boolean }>): void {
    for (const e of list) {
      const online = e.type === 'device.online';
      expect([e.type, e.status, e.previous_status, e.device.is_online, e.sample]).toEqual([
        e.type,
        online ? 'online' : 'offline',
        online ? 'offline' : 'online',
        online,
        true,
      ]);
      if (online) expect(e.occurred_at).toBe(e.device.last_heartbeat_at);
    }
    expect(new Set(list.map((e) => e.id)).size).toBe(list.length);
  }

  test("every device offline (the demo 20 minutes after start): still an online sample, from the key's own devices", async () => {
    t.clock.advance(20 * 60_000);
    const list = (await get('/v1/triggers/device-status/sample').expect(200)).body as Array<Event & { sample: boolean }>;
    const anaDevices = ['a4:83:e7:1f:2b:01', 'a4:83:e7:1f:2b:02', 'a4:83:e7:1f:2b:03', 'a4:83:e7:1f:2b:05'];
    expect(list.map((e) => e.type)).toEqual(expect.arrayContaining(['device.offline', 'device.online']));
    for (const e of list) expect(anaDevices).toContain(e.device.id);
    expectConsistent(list);
    // The missing type is added once, from the first device.
    expect(list.filter((e) => e.type === 'device.online')).toHaveLength(1);
  });

  test('a key that can read no device: both types from a canned device', async () => {
    const data = catalog();
    data.users.push({ id: 'usr_new', account_id: 'acc_harbor', name: 'New' });
    data.api_keys.push({ id: 'key_new', user_id: 'usr_new', name: 'New', key: 'sk_test_new_user_no_devices_0000', scopes: ['device:read'] });
    const other = await buildTestApp({ dataset: data });
    try {
      const res = await request(other.app).get('/v1/triggers/device-status/sample').set('X-API-Key', 'sk_test_new_user_no_devices_0000').expect(200);
      const list = res.body as Array<Event & { sample: boolean }>;
      expect(list.map((e) => e.type).sort()).toEqual(['device.offline', 'device.online']);
      expectConsistent(list);
    } finally {
      await other.close();
    }
  });

  test('samples are not written to the event log', async () => {
    await get('/v1/triggers/device-status/sample').expect(200);
    await get('/v1/triggers/device-status').expect(200, []);
    await get('/v1/events').expect(200, []);
  });
});

describe('keys and scopes', () => {
  const paths = ['/v1/triggers/device-status', '/v1/triggers/device-status/sample', '/v1/events'];

  test.each(paths)('%s needs device:read (403 Invalid scopes)', async (path) => {
    await get(path, keys.anaMenuOnly).expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
    await get(path, keys.anaNoScopes).expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
  });

  test.each(paths)('%s: 401 without a key, 401 for an unknown one', async (path) => {
    await request(t.app).get(path).expect(401, { message: 'Missing API key' });
    await get(path, 'sk_test_nobody_has_this_key_0000').expect(401, { message: 'Invalid API key' });
  });

  test.each(paths)('%s accepts Authorization: Bearer as well as X-API-Key', async (path) => {
    await request(t.app).get(path).set('Authorization', `Bearer ${keys.ana}`).expect(200);
    await get(path).expect(200);
  });

  test('a refused key is not enrolled', async () => {
    await get('/v1/triggers/device-status', keys.anaMenuOnly).expect(403);
    expect((await pollDue(t)).keys).toBe(0);
  });
});

describe('per-key event logs', () => {
  test('events of one key are not visible to another key', async () => {
    for (const key of [keys.ana, keys.ben, keys.zoe]) await get('/v1/triggers/device-status', key).expect(200, []);
    t.clock.advance(timeoutMs);
    expect(await pollDue(t)).toMatchObject({ keys: 3, failed: 0 });

    const ana = (await get('/v1/triggers/device-status').expect(200)).body as Event[];
    const ben = (await get('/v1/triggers/device-status', keys.ben).expect(200)).body as Event[];
    const zoe = (await get('/v1/triggers/device-status', keys.zoe).expect(200)).body as Event[];
    expect(ana.map((e) => e.device.id)).toEqual([dev01]);
    expect(ben.map((e) => e.device.id).sort()).toEqual([dev01, dev04]);
    expect(zoe.map((e) => e.device.id)).toEqual([zoeDevice]);
    // One transition, one id, whoever watches it.
    expect(ben.find((e) => e.device.id === dev01)!.id).toBe(ana[0]!.id);

    expect(((await get('/v1/events', keys.zoe).expect(200)).body as Event[]).map((e) => e.device.id)).toEqual([zoeDevice]);
    // Another key's event id is unknown in this key's log.
    await get(`/v1/events?after=${ana[0]!.id}`, keys.zoe).expect(400);
    await get(`/v1/events?after=${zoe[0]!.id}`).expect(400);
    await get(`/v1/triggers/device-status?devices=${zoeDevice}`).expect(200, []);
  });

  test('a key that has not enrolled sees nothing, even for shared devices', async () => {
    await get('/v1/triggers/device-status').expect(200, []);
    t.clock.advance(timeoutMs);
    await pollDue(t);
    // Ben enrols only now: his baseline already has 01 offline.
    await get('/v1/triggers/device-status', keys.ben).expect(200, []);
    await get('/v1/events', keys.ben).expect(200, []);
  });
});

describe('watching and retention', () => {
  test('a trigger-only key is watched for 24 hours after its last call', async () => {
    await get('/v1/triggers/device-status').expect(200, []);
    t.clock.advance(86_400_000 - 1);
    expect((await pollDue(t)).keys).toBe(1);
    t.clock.advance(2);
    expect((await pollDue(t)).keys).toBe(0);
    await get('/v1/triggers/device-status').expect(200);
    expect((await pollDue(t)).keys).toBe(1);
  });

  test("the poller's loop polls the keys that are due, each once, and none before its interval", async () => {
    await get('/v1/triggers/device-status').expect(200, []); // Ana's baseline: due again in 30 s
    t.clock.advance(10_000);
    await get('/v1/triggers/device-status', keys.ben).expect(200, []); // Ben's: due 10 s after Ana's
    expect(await t.services.poller.runUntilIdle()).toEqual({ keys: 0, events: 0, failed: 0 });
    t.clock.advance(20_000);
    expect(await t.services.poller.runUntilIdle()).toEqual({ keys: 1, events: 0, failed: 0 });
    expect(await t.services.poller.runUntilIdle()).toEqual({ keys: 0, events: 0, failed: 0 });
    t.clock.advance(10_000);
    expect(await t.services.poller.runUntilIdle()).toEqual({ keys: 1, events: 0, failed: 0 });
    // A background poll's next is 0.95 to 1.15 intervals on, on the way to the key's slot (nextPollTime).
    t.clock.advance(39_000);
    expect(await t.services.poller.runUntilIdle()).toEqual({ keys: 2, events: 0, failed: 0 });
  });

  test('events older than 7 days are pruned by the retention sweep', async () => {
    const event = await offlineEvent();
    t.clock.advance(6 * 86_400_000);
    await t.services.retention.runOnce();
    expect((await get('/v1/events').expect(200)).body).toEqual([event]);
    // Kept exactly 7 days, gone 1 ms later.
    t.clock.advance(86_400_000);
    await t.services.retention.runOnce();
    expect((await get('/v1/events').expect(200)).body).toEqual([event]);
    t.clock.advance(1);
    await t.services.retention.runOnce();
    await get('/v1/events').expect(200, []);
    await get('/v1/triggers/device-status').expect(200, []);
    await get(`/v1/events?after=${event.id}`).expect(400);
  });
});

describe('what a poll reads', () => {
  test('ids and heartbeats of every device, whole records only of the devices that changed', async () => {
    await get('/v1/triggers/device-status').expect(200, []);
    const byIds = jest.spyOn(t.services.devices, 'byIds');
    t.clock.advance(timeoutMs);
    expect((await pollDue(t)).events).toBe(1);
    expect(byIds.mock.calls.map(([, ids]) => [...ids])).toEqual([[dev01]]);
    byIds.mockClear();
    expect((await pollDue(t)).events).toBe(0);
    expect(byIds).not.toHaveBeenCalled();
  });
});

/**
 * The device area over HTTP (docs/api.md, docs/devices.md): paging, filters, order,
 * id case, field shape, timestamps, the online/offline boundary and per-user access.
 * Time is the injected ManualClock only; nothing sleeps.
 */
import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

const auth = (key: string): [string, string] => ['Authorization', `Bearer ${key}`];

/** Every field of a device (docs/devices.md), and nothing else. */
const deviceFields = [
  'id',
  'name',
  'timezone',
  'screen_resolution',
  'screen_orientation',
  'registered_at',
  'published_at',
  'last_heartbeat_at',
  'is_online',
  'offline_startup',
  'offline_startup_delay_minutes',
  'open_dev_tools',
  'display_connected',
  'connection_type',
  'wifi_ssid',
  'wifi_signal_strength',
  'updated_at',
  'created_at',
].sort();

const timestampFields = ['registered_at', 'published_at', 'last_heartbeat_at', 'updated_at', 'created_at'] as const;
const sixDigits = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

const UP = {
  d01: 'A4:83:E7:1F:2B:01',
  d02: 'A4:83:E7:1F:2B:02',
  d03: 'A4:83:E7:1F:2B:03',
  d04: 'A4:83:E7:1F:2B:04',
  d05: 'A4:83:E7:1F:2B:05',
  other: 'B0:00:00:00:00:01',
};

type DeviceJson = Record<string, unknown> & { id: string };
interface ListBody {
  total: number;
  data: DeviceJson[];
}

const ids = (body: ListBody): string[] => body.data.map((d) => d.id);

async function list(t: TestApp, query: string, key = keys.ana): Promise<ListBody> {
  const res = await request(t.app)
    .get(`/devices${query}`)
    .set(...auth(key))
    .expect(200);
  return res.body as ListBody;
}

/** A fixture device in the dataset shape, built from the catalog's first device. */
type DatasetDevice = ReturnType<typeof catalog>['devices'][number];
function deviceLike(overrides: Partial<DatasetDevice> & { id: string }): DatasetDevice {
  const base = catalog().devices[0]!;
  return { ...base, name: `Screen ${overrides.id}`, access: [{ user_id: 'usr_ana', level: 'update' }], ...overrides };
}

/** The shared fixture app: the clock stays at 2026-06-01T12:00:00Z. */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog(), env: { HEARTBEAT_TIMEOUT_MS: '300000' } });
});
afterAll(async () => t.close());

describe('happy path', () => {
  test('GET /devices lists the devices the user can access, in order, upper-case ids', async () => {
    const body = await list(t, '');
    expect(body.total).toBe(4);
    expect(ids(body)).toEqual([UP.d01, UP.d02, UP.d03, UP.d05]);
  });

  test('order is registered_at ascending, then id (devices 04 and 05 share registered_at)', async () => {
    const body = await list(t, '', keys.ben);
    expect(ids(body)).toEqual([UP.d01, UP.d04, UP.d05]);
    expect(body.data[1]!.registered_at).toBe(body.data[2]!.registered_at);
  });

  test('order ties are broken by id even when the dataset lists them the other way round', async () => {
    const data = catalog();
    const same = '2025-05-01T00:00:00.000000Z';
    data.devices.push(
      deviceLike({ id: 'a4:83:e7:1f:2b:0b', registered_at: same }),
      deviceLike({ id: 'A4:83:E7:1F:2B:0A', registered_at: same }),
      // registered_at differs by one microsecond only: it wins over the id.
      deviceLike({ id: 'a4:83:e7:1f:2b:00', registered_at: '2025-06-01T00:00:00.000002Z' }),
      deviceLike({ id: 'a4:83:e7:1f:2b:ff', registered_at: '2025-06-01T00:00:00.000001Z' }),
    );
    const app = await buildTestApp({ dataset: data });
    try {
      const body = await list(app, '');
      expect(ids(body)).toEqual([UP.d01, UP.d02, UP.d03, UP.d05, 'A4:83:E7:1F:2B:0A', 'A4:83:E7:1F:2B:0B', 'A4:83:E7:1F:2B:FF', 'A4:83:E7:1F:2B:00']);
    } finally {
      await app.close();
    }
  });

  test('total counts every matching device, not just the page', async () => {
    const body = await list(t, '?page_size=1', keys.ben);
    expect(body.total).toBe(3);
    expect(ids(body)).toEqual([UP.d01]);
    expect(ids(await list(t, '?page_size=1&page=2', keys.ben))).toEqual([UP.d04]);
    expect(ids(await list(t, '?page_size=1&page=3', keys.ben))).toEqual([UP.d05]);
    const page2 = await list(t, '?page_size=2&page=2');
    expect(page2.total).toBe(4);
    expect(ids(page2)).toEqual([UP.d03, UP.d05]);
  });

  test('a page past the end is data: [] with the right total', async () => {
    expect(await list(t, '?page_size=1&page=4', keys.ben)).toEqual({ total: 3, data: [] });
    expect(await list(t, '?page=2')).toEqual({ total: 4, data: [] });
    expect(await list(t, '?page=9007199254740991&page_size=1000')).toEqual({ total: 4, data: [] });
  });

  describe('with 150 devices', () => {
    let big: TestApp;
    const bigIds: string[] = [];
    beforeAll(async () => {
      const data = catalog();
      for (let i = 0; i < 150; i++) {
        const hex = i.toString(16).padStart(4, '0');
        const id = `C0:00:00:00:${hex.slice(0, 2)}:${hex.slice(2)}`.toUpperCase();
        bigIds.push(id);
        // Registered one second apart, added to the dataset newest first.
        const registered = new Date(Date.parse('2024-01-01T00:00:00Z') + i * 1000).toISOString();
        data.devices.unshift(deviceLike({ id, registered_at: registered, created_at: registered }));
      }
      big = await buildTestApp({ dataset: data });
    });
    afterAll(async () => big.close());

    test('default page_size is 100 and default page is 1', async () => {
      const body = await list(big, '');
      expect(body.total).toBe(154);
      expect(body.data).toHaveLength(100);
      expect(ids(body)).toEqual(bigIds.slice(0, 100));
      const explicit = await list(big, '?page=1&page_size=100');
      expect(explicit).toEqual(body);
    });

    test('page 2 with the default size holds the rest', async () => {
      const body = await list(big, '?page=2');
      expect(body.total).toBe(154);
      expect(ids(body)).toEqual([...bigIds.slice(100), UP.d01, UP.d02, UP.d03, UP.d05]);
      expect(await list(big, '?page=3')).toEqual({ total: 154, data: [] });
    });

    test('page_size=1000 is accepted and returns everything', async () => {
      const body = await list(big, '?page_size=1000');
      expect(body.total).toBe(154);
      expect(body.data).toHaveLength(154);
    });
  });

  test('unknown query parameters are ignored', async () => {
    const body = await list(t, '?foo=bar&sort=desc&pageSize=1&limit=1&offset=2&IS_ONLINE=yes');
    expect(body.total).toBe(4);
    expect(ids(body)).toEqual([UP.d01, UP.d02, UP.d03, UP.d05]);
  });

  test('is_online=true and is_online=false filter, and total follows the filter', async () => {
    const online = await list(t, '?is_online=true');
    expect(online.total).toBe(1);
    expect(ids(online)).toEqual([UP.d01]);
    expect(online.data.every((d) => d.is_online === true)).toBe(true);

    const offline = await list(t, '?is_online=false');
    expect(offline.total).toBe(3);
    expect(ids(offline)).toEqual([UP.d02, UP.d03, UP.d05]);
    expect(offline.data.every((d) => d.is_online === false)).toBe(true);

    const offlinePage = await list(t, '?is_online=false&page_size=1&page=2');
    expect(offlinePage).toMatchObject({ total: 3 });
    expect(ids(offlinePage)).toEqual([UP.d03]);

    const ben = await list(t, '?is_online=true', keys.ben);
    expect(ids(ben)).toEqual([UP.d01, UP.d04]);
  });

  test('ids filter: comma-separated, trimmed, case-insensitive; total reflects it', async () => {
    const body = await list(t, '?ids=%20a4:83:e7:1f:2b:01%20,A4:83:E7:1F:2B:03,%20a4:83:E7:1f:2B:05');
    expect(body.total).toBe(3);
    expect(ids(body)).toEqual([UP.d01, UP.d03, UP.d05]);

    const paged = await list(t, '?ids=a4:83:e7:1f:2b:01,a4:83:e7:1f:2b:03,a4:83:e7:1f:2b:05&page_size=1&page=2');
    expect(paged.total).toBe(3);
    expect(ids(paged)).toEqual([UP.d03]);

    const encoded = await list(t, '?ids=a4%3A83%3Ae7%3A1f%3A2b%3A02%2CA4%3A83%3AE7%3A1F%3A2B%3A01');
    expect(encoded.total).toBe(2);
    expect(ids(encoded)).toEqual([UP.d01, UP.d02]);
  });

  test('ids filter with unknown ids matches nothing rather than failing', async () => {
    expect(await list(t, '?ids=00:00:00:00:00:00')).toEqual({ total: 0, data: [] });
    const mixed = await list(t, '?ids=00:00:00:00:00:00,a4:83:e7:1f:2b:02');
    expect(ids(mixed)).toEqual([UP.d02]);
    expect(mixed.total).toBe(1);
  });

  test('ids and is_online combine', async () => {
    const body = await list(t, '?ids=a4:83:e7:1f:2b:01,a4:83:e7:1f:2b:02&is_online=false');
    expect(body).toMatchObject({ total: 1 });
    expect(ids(body)).toEqual([UP.d02]);
  });

  test('exactly 1000 ids is accepted', async () => {
    const many = Array.from({ length: 999 }, (_, i) => `x${i}`);
    many.push('a4:83:e7:1f:2b:05');
    const body = await list(t, `?ids=${many.join(',')}`);
    expect(body.total).toBe(1);
    expect(ids(body)).toEqual([UP.d05]);
  });

  test('GET /devices/{id} returns the device unwrapped with a lower-case id', async () => {
    const res = await request(t.app)
      .get('/devices/A4:83:E7:1F:2B:01')
      .set(...auth(keys.ana))
      .expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      id: 'a4:83:e7:1f:2b:01',
      name: 'Front counter',
      timezone: 'America/Chicago',
      screen_resolution: '1920x1080',
      screen_orientation: 'normal',
      registered_at: '2025-01-10T09:00:00.123456Z',
      published_at: '2026-06-01T10:00:00.000000Z',
      last_heartbeat_at: '2026-06-01T11:59:30.000000Z',
      is_online: true,
      offline_startup: false,
      offline_startup_delay_minutes: 0,
      open_dev_tools: false,
      display_connected: true,
      connection_type: 'wifi',
      wifi_ssid: 'HarborStaff',
      wifi_signal_strength: -54,
      updated_at: '2026-06-01T11:00:00.000000Z',
      created_at: '2025-01-10T09:00:00.123456Z',
    });
  });

  test.each([
    ['upper case', '/devices/A4:83:E7:1F:2B:05'],
    ['lower case', '/devices/a4:83:e7:1f:2b:05'],
    ['mixed case', '/devices/a4:83:E7:1f:2B:05'],
    ['URL-encoded colons, upper', '/devices/A4%3A83%3AE7%3A1F%3A2B%3A05'],
    ['URL-encoded colons, lower', '/devices/a4%3a83%3ae7%3a1f%3a2b%3a05'],
  ])('GET /devices/{id} matches case-insensitively: %s', async (_name, path) => {
    const res = await request(t.app)
      .get(path)
      .set(...auth(keys.ana))
      .expect(200);
    expect(res.body.id).toBe('a4:83:e7:1f:2b:05');
    expect(res.body.name).toBe('Café window');
  });

  test('the same device looks the same in list and single output apart from id case', async () => {
    const listed = (await list(t, '?ids=a4:83:e7:1f:2b:02')).data[0]!;
    const single = (
      await request(t.app)
        .get('/devices/a4:83:e7:1f:2b:02')
        .set(...auth(keys.ana))
        .expect(200)
    ).body;
    expect(listed.id).toBe('A4:83:E7:1F:2B:02');
    expect(single.id).toBe('a4:83:e7:1f:2b:02');
    expect({ ...listed, id: 'x' }).toEqual({ ...single, id: 'x' });
  });

  test('every device field is present on every device, in list and single output', async () => {
    for (const key of [keys.ana, keys.ben, keys.zoe]) {
      const body = await list(t, '', key);
      expect(body.data.length).toBeGreaterThan(0);
      for (const device of body.data) {
        expect(Object.keys(device).sort()).toEqual(deviceFields);
        const single = await request(t.app)
          .get(`/devices/${device.id}`)
          .set(...auth(key))
          .expect(200);
        expect(Object.keys(single.body).sort()).toEqual(deviceFields);
      }
    }
  });

  test('field types are those of docs/devices.md', async () => {
    const body = await list(t, '');
    for (const d of body.data) {
      expect(typeof d.name).toBe('string');
      expect(d.timezone).toMatch(/^[A-Za-z_]+\/[A-Za-z0-9_+-]+/);
      expect(d.screen_resolution).toMatch(/^\d+x\d+$/);
      expect(typeof d.screen_orientation).toBe('string');
      expect(typeof d.is_online).toBe('boolean');
      expect(typeof d.offline_startup).toBe('boolean');
      expect(Number.isInteger(d.offline_startup_delay_minutes)).toBe(true);
      expect(typeof d.open_dev_tools).toBe('boolean');
      expect(typeof d.display_connected).toBe('boolean');
      expect(typeof d.connection_type).toBe('string');
      if (d.wifi_signal_strength !== null) expect(Number.isInteger(d.wifi_signal_strength)).toBe(true);
      if (d.wifi_ssid !== null) expect(typeof d.wifi_ssid).toBe('string');
    }
  });

  test('the never-seen device has its nullable fields null (present, not missing) and is offline', async () => {
    const single = await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:03')
      .set(...auth(keys.ana))
      .expect(200);
    const listed = (await list(t, '?ids=a4:83:e7:1f:2b:03')).data[0]!;
    for (const device of [single.body as DeviceJson, listed]) {
      for (const field of ['published_at', 'last_heartbeat_at', 'wifi_ssid', 'wifi_signal_strength']) {
        expect(device).toHaveProperty(field, null);
      }
      expect(device.is_online).toBe(false);
    }
  });

  test('timestamps always have six fractional digits and microseconds round-trip exactly', async () => {
    const body = await list(t, '');
    for (const d of body.data) {
      for (const field of timestampFields) {
        const value = d[field];
        if (value !== null) expect(value).toMatch(sixDigits);
      }
    }
    const byId = new Map(body.data.map((d) => [d.id, d]));
    expect(byId.get(UP.d02)!.registered_at).toBe('2025-02-01T14:30:00.000001Z');
    expect(byId.get(UP.d02)!.created_at).toBe('2025-02-01T14:30:00.000001Z');
    expect(byId.get(UP.d01)!.registered_at).toBe('2025-01-10T09:00:00.123456Z');
    expect(byId.get(UP.d03)!.registered_at).toBe('2025-03-01T00:00:00.000000Z');
    expect(byId.get(UP.d05)!.registered_at).toBe('2025-04-01T08:00:00.500000Z');
    const single = await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:02')
      .set(...auth(keys.ana))
      .expect(200);
    expect(single.body.registered_at).toBe('2025-02-01T14:30:00.000001Z');
  });

  test('dataset timestamps without fraction or with an offset come out as six-digit UTC', async () => {
    const data = catalog();
    data.devices = [
      deviceLike({
        id: 'd0:00:00:00:00:01',
        registered_at: '2025-07-01T10:00:00Z',
        created_at: '2025-07-01T12:00:00.5+02:00',
        updated_at: '2025-07-01T10:00:00.999999Z',
        published_at: '2025-07-01T10:00:00.1234567Z',
        last_heartbeat_at: null,
      }),
    ];
    const app = await buildTestApp({ dataset: data });
    try {
      const res = await request(app.app)
        .get('/devices/d0:00:00:00:00:01')
        .set(...auth(keys.ana))
        .expect(200);
      expect(res.body.registered_at).toBe('2025-07-01T10:00:00.000000Z');
      expect(res.body.created_at).toBe('2025-07-01T10:00:00.500000Z');
      expect(res.body.updated_at).toBe('2025-07-01T10:00:00.999999Z');
      // Beyond microseconds is truncated, never rounded into a different second.
      expect(res.body.published_at).toMatch(/^2025-07-01T10:00:00\.12345\dZ$/);
    } finally {
      await app.close();
    }
  });

  test('is_online is computed at read time from the injected clock', async () => {
    const clock = new ManualClock();
    const app = await buildTestApp({ dataset: catalog(), clock, env: { HEARTBEAT_TIMEOUT_MS: '300000' } });
    try {
      expect(ids(await list(app, '?is_online=true'))).toEqual([UP.d01]);
      clock.advance(5 * 60_000); // device 01's heartbeat is now 5m30s old
      expect(await list(app, '?is_online=true')).toEqual({ total: 0, data: [] });
      const res = await request(app.app)
        .get('/devices/a4:83:e7:1f:2b:01')
        .set(...auth(keys.ana))
        .expect(200);
      expect(res.body.is_online).toBe(false);
    } finally {
      await app.close();
    }
  });
});

describe('offline boundary at HEARTBEAT_TIMEOUT_MS', () => {
  const heartbeat = '2026-06-01T11:55:00.000000Z';
  const heartbeatMs = Date.parse(heartbeat);
  let app: TestApp;
  let clock: ManualClock;

  function boundaryDataset(lastHeartbeat: string) {
    const data = catalog();
    data.devices = [deviceLike({ id: 'e0:00:00:00:00:01', last_heartbeat_at: lastHeartbeat })];
    return data;
  }

  async function status(a: TestApp) {
    const single = await request(a.app)
      .get('/devices/e0:00:00:00:00:01')
      .set(...auth(keys.ana))
      .expect(200);
    const listed = await list(a, '');
    const online = await list(a, '?is_online=true');
    const offline = await list(a, '?is_online=false');
    return {
      single: single.body.is_online as boolean,
      listed: listed.data[0]!.is_online as boolean,
      onlineTotal: online.total,
      offlineTotal: offline.total,
    };
  }

  const isOffline = { single: false, listed: false, onlineTotal: 0, offlineTotal: 1 };
  const isOnline = { single: true, listed: true, onlineTotal: 1, offlineTotal: 0 };

  afterEach(async () => app.close());

  test('a heartbeat exactly HEARTBEAT_TIMEOUT_MS old is offline; 1 ms younger is online', async () => {
    clock = new ManualClock(heartbeatMs + 300_000);
    app = await buildTestApp({ dataset: boundaryDataset(heartbeat), clock, env: { HEARTBEAT_TIMEOUT_MS: '300000' } });
    expect(await status(app)).toEqual(isOffline);
    clock.ms = heartbeatMs + 300_000 - 1;
    expect(await status(app)).toEqual(isOnline);
    clock.ms = heartbeatMs + 300_000 + 1;
    expect(await status(app)).toEqual(isOffline);
    // The heartbeat itself is reported unchanged.
    const res = await request(app.app)
      .get('/devices/e0:00:00:00:00:01')
      .set(...auth(keys.ana))
      .expect(200);
    expect(res.body.last_heartbeat_at).toBe(heartbeat);
  });

  test('the timeout comes from HEARTBEAT_TIMEOUT_MS, not a hard-coded 5 minutes', async () => {
    clock = new ManualClock(heartbeatMs + 60_000);
    app = await buildTestApp({ dataset: boundaryDataset(heartbeat), clock, env: { HEARTBEAT_TIMEOUT_MS: '60000' } });
    expect(await status(app)).toEqual(isOffline);
    clock.ms = heartbeatMs + 60_000 - 1;
    expect(await status(app)).toEqual(isOnline);
    clock.ms = heartbeatMs + 4 * 60_000; // online under the 5-minute default, offline here
    expect(await status(app)).toEqual(isOffline);
  });

  test('the boundary is exact to the microsecond', async () => {
    // One microsecond younger than the timeout at 12:00:00.000 → still online.
    clock = new ManualClock(heartbeatMs + 300_000);
    app = await buildTestApp({
      dataset: boundaryDataset('2026-06-01T11:55:00.000001Z'),
      clock,
      env: { HEARTBEAT_TIMEOUT_MS: '300000' },
    });
    expect(await status(app)).toEqual(isOnline);
    clock.advance(1);
    expect(await status(app)).toEqual(isOffline);
  });

  test('a relative heartbeat (now-5m) at the default timeout is offline at import time', async () => {
    clock = new ManualClock();
    app = await buildTestApp({ dataset: boundaryDataset('now-5m'), clock, env: { HEARTBEAT_TIMEOUT_MS: '300000' } });
    expect(await status(app)).toEqual(isOffline);
    clock.advance(-1);
    expect(await status(app)).toEqual(isOnline);
  });
});

describe('errors', () => {
  async function bad(query: string, key = keys.ana) {
    const res = await request(t.app)
      .get(`/devices${query}`)
      .set(...auth(key))
      .expect(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    return res.body as { message: string; details: Array<{ path: string; message: string }> };
  }

  test('page_size=1001 is a 400 with the exact message and details', async () => {
    const body = await bad('?page_size=1001');
    expect(body).toEqual({
      message: 'page_size must be an integer from 1 to 1000',
      details: [{ path: 'page_size', message: 'page_size must be an integer from 1 to 1000' }],
    });
  });

  test.each([
    ['page=0', 'page'],
    ['page=-1', 'page'],
    ['page=abc', 'page'],
    ['page=1.5', 'page'],
    ['page=', 'page'],
    ['page=1e3', 'page'],
    ['page=9007199254740992', 'page'],
    ['page_size=0', 'page_size'],
    ['page_size=abc', 'page_size'],
    ['page_size=-5', 'page_size'],
    ['page_size=10.0', 'page_size'],
    ['page_size=0x10', 'page_size'],
    ['is_online=yes', 'is_online'],
    ['is_online=1', 'is_online'],
    ['is_online=', 'is_online'],
  ])('%s → 400 naming %s', async (query, name) => {
    const body = await bad(`?${query}`);
    expect(body.message).toMatch(new RegExp(`^${name}\\b`));
    expect(body.details).toEqual([{ path: name, message: body.message }]);
  });

  test('page_size=0 has the exact range message', async () => {
    expect((await bad('?page_size=0')).message).toBe('page_size must be an integer from 1 to 1000');
  });

  test.each([
    ['page=1&page=2', 'page'],
    ['page=1&page=1', 'page'],
    ['page_size=10&page_size=20', 'page_size'],
    ['is_online=true&is_online=false', 'is_online'],
  ])('a repeated scalar parameter (%s) → 400 naming it', async (query, name) => {
    const body = await bad(`?${query}`);
    expect(body.message).toContain(name);
    expect(body.details).toEqual([{ path: name, message: body.message }]);
  });

  test('several bad parameters are all listed in details; message is the first', async () => {
    const body = await bad('?page=0&page_size=5000&is_online=maybe');
    expect(body.details.map((d) => d.path).sort()).toEqual(['is_online', 'page', 'page_size']);
    expect(body.details.map((d) => d.message)).toContain(body.message);
    expect(body.details.find((d) => d.path === 'page_size')!.message).toBe('page_size must be an integer from 1 to 1000');
  });

  test('more than 1000 ids → 400 naming ids', async () => {
    const many = Array.from({ length: 1001 }, (_, i) => `x${i}`).join(',');
    const body = await bad(`?ids=${many}`);
    expect(body.message).toMatch(/^ids\b/);
    expect(body.details).toEqual([{ path: 'ids', message: body.message }]);
  });

  test('a device that does not exist → 404 Device not found', async () => {
    const res = await request(t.app)
      .get('/devices/00:00:00:00:00:00')
      .set(...auth(keys.ana))
      .expect(404);
    expect(res.body).toEqual({ message: 'Device not found' });
  });

  test('an unknown route under the device area is a JSON 404 Not found', async () => {
    await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:01/extra')
      .set(...auth(keys.ana))
      .expect(404, { message: 'Not found' });
  });

  test('the 400 is decided after authentication: no key + bad params → 401, no scope + bad params → 403', async () => {
    await request(t.app).get('/devices?page=0').expect(401, { message: 'Missing API key' });
    await request(t.app)
      .get('/devices?page=0')
      .set(...auth(keys.anaMenuOnly))
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
  });
});

describe('access', () => {
  test('a device with read access is visible (list and single)', async () => {
    // Ana has `read` on 02; Ben has `read` on 01 and 05.
    expect(ids(await list(t, '?ids=a4:83:e7:1f:2b:02'))).toEqual([UP.d02]);
    await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:02')
      .set(...auth(keys.ana))
      .expect(200);
    await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:05')
      .set(...auth(keys.ben))
      .expect(200);
  });

  test('a device with update access is visible (list and single)', async () => {
    // Ana has `update` on 01, 03 and 05; Ben on 04.
    expect(ids(await list(t, '?ids=a4:83:e7:1f:2b:03'))).toEqual([UP.d03]);
    await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:03')
      .set(...auth(keys.ana))
      .expect(200);
    await request(t.app)
      .get('/devices/A4:83:E7:1F:2B:04')
      .set(...auth(keys.ben))
      .expect(200);
  });

  test("another account's device is 404, identical to a device that does not exist", async () => {
    const other = await request(t.app)
      .get('/devices/b0:00:00:00:00:01')
      .set(...auth(keys.ana))
      .expect(404);
    const missing = await request(t.app)
      .get('/devices/b0:00:00:00:00:99')
      .set(...auth(keys.ana))
      .expect(404);
    expect(other.body).toEqual({ message: 'Device not found' });
    expect(missing.body).toEqual(other.body);
    // Its owner sees it.
    await request(t.app)
      .get('/devices/b0:00:00:00:00:01')
      .set(...auth(keys.zoe))
      .expect(200);
  });

  test('a device of the same account without a grant for this user is 404 too', async () => {
    // 04 is Ben's only; 02 and 03 are Ana's only.
    await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:04')
      .set(...auth(keys.ana))
      .expect(404, { message: 'Device not found' });
    await request(t.app)
      .get('/devices/A4:83:E7:1F:2B:02')
      .set(...auth(keys.ben))
      .expect(404, { message: 'Device not found' });
    await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:03')
      .set(...auth(keys.ben))
      .expect(404, { message: 'Device not found' });
  });
});

describe('security', () => {
  test("another account's devices are absent from lists, filters and totals", async () => {
    const ana = await list(t, '?page_size=1000');
    expect(ids(ana)).not.toContain(UP.other);
    expect(await list(t, '?ids=b0:00:00:00:00:01')).toEqual({ total: 0, data: [] });
    expect(await list(t, '?ids=B0:00:00:00:00:01&is_online=true')).toEqual({ total: 0, data: [] });

    const zoe = await list(t, '', keys.zoe);
    expect(zoe.total).toBe(1);
    expect(ids(zoe)).toEqual([UP.other]);
    expect(await list(t, '?ids=a4:83:e7:1f:2b:01', keys.zoe)).toEqual({ total: 0, data: [] });
  });

  test('devices of the same account without a grant are absent from lists and totals', async () => {
    const ana = await list(t, '?ids=a4:83:e7:1f:2b:04,a4:83:e7:1f:2b:01');
    expect(ana.total).toBe(1);
    expect(ids(ana)).toEqual([UP.d01]);
    const ben = await list(t, '?is_online=false', keys.ben);
    expect(ids(ben)).toEqual([UP.d05]);
    expect(ben.total).toBe(1);
  });

  test('no internal fields (access lists, user or account ids) leak into device objects', async () => {
    const res = await request(t.app)
      .get('/devices?page_size=1000')
      .set(...auth(keys.ana))
      .expect(200);
    const text = JSON.stringify(res.body);
    for (const secret of ['usr_', 'acc_', 'access', 'level', 'key_']) expect(text).not.toContain(secret);
  });

  test.each(["' OR '1'='1", "a4:83:e7:1f:2b:01') OR 1=1 --", '%', 'a4:83:e7:1f:2b:0_', '*', '"]'])(
    'hostile ids value %j matches nothing and never errors',
    async (value) => {
      const body = await list(t, `?ids=${encodeURIComponent(value)}`);
      expect(body).toEqual({ total: 0, data: [] });
    },
  );

  test.each(["' OR '1'='1", '%25', 'a4:83:e7:1f:2b:0_', '..%2F..%2Fhealthz'])('hostile device id %j is a 404, never another device', async (value) => {
    const res = await request(t.app)
      .get(`/devices/${encodeURIComponent(value)}`)
      .set(...auth(keys.ana))
      .expect(404);
    expect(res.body).toEqual({ message: 'Device not found' });
  });

  test('bracket syntax is not parsed into arrays or objects: such names are unknown and ignored', async () => {
    for (const query of ['?page[a]=0', '?page_size[]=1001', '?is_online[]=maybe', '?ids[]=b0:00:00:00:00:01']) {
      const body = await list(t, query);
      expect(body.total).toBe(4);
      expect(ids(body)).toEqual([UP.d01, UP.d02, UP.d03, UP.d05]);
    }
  });
});

describe('an account with more devices than one page of the store', () => {
  // 2,600 devices, in groups of 7 sharing one registered_at, listed newest first: pages of
  // 1,000 read in order from the access index must cut ties by id without losing or
  // repeating a device.
  const count = 2600;
  const registered = (i: number) => `2025-01-01T00:00:${String(Math.floor(i / 7) % 60).padStart(2, '0')}.${String(Math.floor(i / 420)).padStart(6, '0')}Z`;
  const mac = (i: number) => `c0:00:00:00:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`;
  let big: TestApp;
  beforeAll(async () => {
    const data = catalog();
    for (let i = count - 1; i >= 0; i--) data.devices.push(deviceLike({ id: mac(i), name: `Kiosk ${i}`, registered_at: registered(i) }));
    big = await buildTestApp({ dataset: data, env: { HEARTBEAT_TIMEOUT_MS: '300000' } });
  });
  afterAll(async () => big.close());

  test('the device dropdown has every device once, in label order', async () => {
    const res = await request(big.app)
      .get('/v1/devices/options')
      .set(...auth(keys.ana))
      .expect(200);
    const options = res.body as Array<[string, string]>;
    expect(options).toHaveLength(count + 4);
    expect(new Set(options.map(([, value]) => value)).size).toBe(count + 4);
    const kiosks = options.filter(([label]) => label.startsWith('Kiosk '));
    expect(kiosks.map(([label]) => label)).toEqual(Array.from({ length: count }, (_, i) => `Kiosk ${i}`));
  });

  test('GET /devices pages through all of them in registered_at, id order', async () => {
    const seen: DeviceJson[] = [];
    for (let page = 1; ; page++) {
      const body = await list(big, `?page=${page}&page_size=1000`);
      expect(body.total).toBe(count + 4);
      seen.push(...body.data);
      if (body.data.length < 1000) break;
    }
    expect(seen).toHaveLength(count + 4);
    const order = seen.map((d) => `${d.registered_at as string}|${d.id.toLowerCase()}`);
    expect(order).toEqual([...order].sort());
  });
});

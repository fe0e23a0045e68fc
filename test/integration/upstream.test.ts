import { afterAll, beforeAll, beforeEach, describe, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { catalog, groupIds, keys, menuIds } from '../fixtures/catalog.js';

/**
 * Upstream mode (docs/upstream.md) over HTTP: the connector in front of a
 * real upstream on 127.0.0.1:0 (FakeUpstream = the embedded service on its own database,
 * recording every call and injecting faults). The connector's ManualClock drives cache ages
 * and key verdicts; real time passes only for timeouts, backoff and Retry-After.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

let upstream: FakeUpstream;
/** The same catalog served in embedded mode: the reference for "same answers" (docs/upstream.md). */
let embedded: TestApp;
const apps: TestApp[] = [];
const servers: Server[] = [];

/** A connector in upstream mode for both areas, with fast timeouts unless overridden; `logLines` keeps its log. */
async function connector(env: Record<string, string> = {}, logLines?: string[]): Promise<TestApp> {
  const t = await buildTestApp({
    env: {
      DEVICE_API_URL: upstream.baseUrl,
      MENU_API_URL: upstream.baseUrl,
      UPSTREAM_TIMEOUT_MS: '1000',
      UPSTREAM_RETRIES: '1',
      ...env,
    },
    logLines,
  });
  apps.push(t);
  return t;
}

/** A connector whose log lines (warn and up) are kept. */
async function loggedConnector(): Promise<{ t: TestApp; lines: string[] }> {
  const lines: string[] = [];
  return { t: await connector({ LOG_LEVEL: 'warn' }, lines), lines };
}

/** A port on 127.0.0.1 that nothing listens on (bound on port 0, then closed). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function listen(t: TestApp): Promise<string> {
  const server = t.app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true (real time), failing after `ms`. */
async function eventually(check: () => boolean | Promise<boolean>, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await sleep(10);
  }
}

/** A complete, valid device (docs/devices.md) as an upstream would send it. */
function upstreamDevice(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'A4:83:E7:1F:2B:01',
    name: 'Front counter',
    timezone: 'America/Chicago',
    screen_resolution: '1920x1080',
    screen_orientation: 'normal',
    registered_at: '2025-01-10T09:00:00.123456Z',
    published_at: null,
    last_heartbeat_at: '2026-06-01T11:59:30.000001Z',
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
    ...overrides,
  };
}

const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
const apiKey = (key: string) => ({ 'X-API-Key': key });

beforeAll(async () => {
  upstream = await new FakeUpstream(catalog()).start();
  embedded = await buildTestApp({ dataset: catalog() });
});

beforeEach(async () => {
  upstream.reset();
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  for (const t of apps) await t.close();
  await embedded.close();
  await upstream.stop();
});

describe('the same answers as embedded mode', () => {
  const devicePaths = [
    '/devices',
    '/devices?page=2&page_size=2',
    '/devices?page=9&page_size=2',
    '/devices?is_online=false',
    '/devices?ids=a4:83:e7:1f:2b:01,%20A4:83:E7:1F:2B:05',
    '/devices/A4:83:E7:1F:2B:01',
    '/devices/a4:83:e7:1f:2b:02',
  ];
  const menuPaths = [
    '/v1/menus',
    '/v1/groups',
    `/v1/groups?menus=${menuIds.breakfast}`,
    '/v1/groups?tags=temperature:*',
    `/v1/groups?groups=${groupIds.hot}&tags=caffeine`,
    '/v1/menus/options',
    `/v1/menus/${menuIds.allDay}/groups/options`,
    `/v1/menus/${menuIds.allDay}/groups/options?format=tree&parent=${groupIds.drinks}`,
  ];

  // One connector without caches, so every comparison really goes upstream.
  let uncached: TestApp;
  beforeAll(async () => {
    uncached = await connector({ OPTIONS_CACHE_TTL_MS: '0', DEVICE_CACHE_TTL_MS: '0' });
  });

  test.each(devicePaths)('device area %s answers exactly like embedded mode', async (path) => {
    const t = uncached;
    const expected = await request(embedded.app).get(path).set(bearer(keys.ana)).expect(200);
    const actual = await request(t.app).get(path).set(bearer(keys.ana)).expect(200);
    expect(actual.body).toEqual(expected.body);
    expect(upstream.callsTo('/devices').length).toBeGreaterThan(0);
  });

  test.each(menuPaths)('menu area %s answers exactly like embedded mode', async (path) => {
    const t = uncached;
    const expected = await request(embedded.app).get(path).set(apiKey(keys.ana)).expect(200);
    const actual = await request(t.app).get(path).set(apiKey(keys.ana)).expect(200);
    expect(actual.body).toEqual(expected.body);
    expect(upstream.calls.length).toBeGreaterThan(0);
  });

  test('/v1/devices/options answers exactly like embedded mode', async () => {
    const t = uncached;
    const expected = await request(embedded.app).get('/v1/devices/options').set(bearer(keys.ana)).expect(200);
    const actual = await request(t.app).get('/v1/devices/options').set(bearer(keys.ana)).expect(200);
    expect(actual.body).toEqual(expected.body);
    expect(actual.body).toContainEqual(['Front counter', 'a4:83:e7:1f:2b:01']);
  });

  test('device list: total counts all matches, paging, ids upper case, filters forwarded', async () => {
    const t = await connector();
    const all = await request(t.app).get('/devices').set(bearer(keys.ana)).expect(200);
    expect(all.body.total).toBe(4);
    expect(all.body.data.map((d: Json) => d.id)).toEqual(['A4:83:E7:1F:2B:01', 'A4:83:E7:1F:2B:02', 'A4:83:E7:1F:2B:03', 'A4:83:E7:1F:2B:05']);
    const page = await request(t.app).get('/devices?page=2&page_size=2').set(bearer(keys.ana)).expect(200);
    expect(page.body.total).toBe(4);
    expect(page.body.data.map((d: Json) => d.id)).toEqual(['A4:83:E7:1F:2B:03', 'A4:83:E7:1F:2B:05']);
    const past = await request(t.app).get('/devices?page=3&page_size=2').set(bearer(keys.ana)).expect(200);
    expect(past.body).toEqual({ total: 4, data: [] });
    const byId = await request(t.app).get('/devices?ids=a4:83:e7:1f:2b:02,A4:83:E7:1F:2B:05').set(bearer(keys.ana)).expect(200);
    expect(byId.body.total).toBe(2);
    expect(byId.body.data.map((d: Json) => d.id)).toEqual(['A4:83:E7:1F:2B:02', 'A4:83:E7:1F:2B:05']);
    const pageCall = upstream.callsTo('/devices').find((c) => c.query.page === '2');
    expect(pageCall?.query).toMatchObject({ page: '2', page_size: '2' });
  });

  test('single device: lower-case id, microsecond timestamps kept exactly', async () => {
    const t = await connector();
    const one = await request(t.app).get('/devices/A4:83:E7:1F:2B:01').set(bearer(keys.ana)).expect(200);
    expect(one.body.id).toBe('a4:83:e7:1f:2b:01');
    expect(one.body.registered_at).toBe('2025-01-10T09:00:00.123456Z');
    expect(one.body.created_at).toBe('2025-01-10T09:00:00.123456Z');
    const two = await request(t.app).get('/devices/a4:83:e7:1f:2b:02').set(bearer(keys.ana)).expect(200);
    expect(two.body.registered_at).toBe('2025-02-01T14:30:00.000001Z');
    expect(two.body.is_online).toBe(false);
    const never = await request(t.app).get('/devices/a4:83:e7:1f:2b:03').set(bearer(keys.ana)).expect(200);
    expect(never.body).toMatchObject({ last_heartbeat_at: null, published_at: null, wifi_ssid: null, wifi_signal_strength: null });
  });

  test('upstream timestamps are normalised to six digits in UTC without losing microseconds; unknown fields dropped', async () => {
    const t = await connector();
    upstream.failNext({
      status: 200,
      pathPrefix: '/devices/',
      body: upstreamDevice({
        registered_at: '2025-05-05T07:05:05.999999+02:00',
        created_at: '2025-05-05T05:05:05.1234567Z',
        updated_at: '2025-05-05T05:05:05Z',
        internal_notes: 'do not show',
      }),
    });
    const res = await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ana)).expect(200);
    expect(res.body.registered_at).toBe('2025-05-05T05:05:05.999999Z');
    expect(res.body.created_at).toBe('2025-05-05T05:05:05.123456Z');
    expect(res.body.updated_at).toBe('2025-05-05T05:05:05.000000Z');
    expect(res.body.last_heartbeat_at).toBe('2026-06-01T11:59:30.000001Z');
    expect(res.body).not.toHaveProperty('internal_notes');
    expect(res.body.id).toBe('a4:83:e7:1f:2b:01');
  });

  test('/v1/menus and /v1/groups envelopes with totals equal to their arrays', async () => {
    const t = await connector();
    const menus = await request(t.app).get('/v1/menus').set(apiKey(keys.ana)).expect(200);
    expect(menus.body.metadata).toEqual({ menus: { total: 2 } });
    expect(menus.body.menus.map((m: Json) => m.id)).toEqual([menuIds.allDay, menuIds.breakfast]);
    expect(menus.body.menus[0]).toEqual({
      id: menuIds.allDay,
      name: 'All day',
      description: 'Served 7am to close',
      tags: ['daypart:all'],
      metadata: { groups: { total: 2 } },
    });
    const groups = await request(t.app).get(`/v1/groups?menus=${menuIds.allDay}`).set(apiKey(keys.ana)).expect(200);
    expect(groups.body.metadata).toEqual({ groups: { total: 2 } });
    expect(groups.body.groups.map((g: Json) => g.id)).toEqual([groupIds.drinks, groupIds.burgers]);
    expect(groups.body.groups[0].metadata).toEqual({ groups: { total: 1 }, items: { total: 1 } });
    expect(upstream.callsTo('/v1/groups')[0]?.query).toMatchObject({ menus: menuIds.allDay });
  });

  test('/v1/menus accepts a bare array; a missing group count is taken from /v1/groups; extra fields dropped', async () => {
    const t = await connector();
    upstream.failNext({
      status: 200,
      pathPrefix: '/v1/menus',
      body: [{ id: menuIds.breakfast, name: 'Breakfast', account_id: 'acc_harbor', internal: true }],
    });
    const res = await request(t.app).get('/v1/menus').set(apiKey(keys.ana)).expect(200);
    expect(res.body).toEqual({
      metadata: { menus: { total: 1 } },
      menus: [{ id: menuIds.breakfast, name: 'Breakfast', description: null, tags: [], metadata: { groups: { total: 2 } } }],
    });
    expect(upstream.callsTo('/v1/groups')[0]?.query).toMatchObject({ menus: menuIds.breakfast });
    expect(upstream.callsTo('/v1/groups')[0]?.apiKey).toBe(keys.ana);
  });

  /** The one line that says why the body was refused: its JSON path and limit, and no stack anywhere. */
  function expectRefusedAt(lines: string[], issue: string): void {
    const refused = lines.map((l) => JSON.parse(l) as Json).filter((l) => l.msg === 'upstream body does not match the interface');
    expect(refused).toEqual([expect.objectContaining({ level: 40, area: 'menu', route: '/v1/groups', issues: [issue] })]);
    expect(lines.join('\n')).not.toMatch(/Maximum call stack|RangeError|"stack"|\\n\s+at /);
  }

  test('groups nested past 32 levels upstream are a 502 naming the limit in the log, never a stack overflow', async () => {
    const { t, lines } = await loggedConnector();
    // A string body: JSON.stringify itself would overflow on such a tree.
    const deep = `${'{"id":"g","name":"Level","groups":['.repeat(20_000)}${']}'.repeat(20_000)}`;
    // Every attempt gets it: where JSON.parse itself runs out of stack on such a body, the
    // answer is garbage and is retried.
    upstream.failAlways({ status: 200, pathPrefix: '/v1/groups', body: `{"groups":[${deep}]}` });
    try {
      const res = await request(t.app).get(`/v1/groups?menus=${menuIds.allDay}`).set(apiKey(keys.ana)).expect(502);
      expect(res.body).toEqual({ message: 'Upstream unavailable' });
      await request(t.app).get('/healthz').expect(200);
    } finally {
      upstream.failAlways(null);
    }
    expectRefusedAt(lines, `groups.0${'.groups.0'.repeat(32)}: groups nest more than 32 levels deep here (the limit is 32)`);
  });

  test('items nested past 8 levels upstream are a 502 naming the path and the limit in the log', async () => {
    const { t, lines } = await loggedConnector();
    let items: Json[] = [];
    for (let level = 0; level < 9; level += 1) items = [{ id: `i${level}`, name: 'Level', inStock: true, items }];
    upstream.failNext({ status: 200, pathPrefix: '/v1/groups', body: { groups: [{ id: 'g', name: 'Group', groups: [], items }] } });
    await request(t.app).get(`/v1/groups?menus=${menuIds.allDay}`).set(apiKey(keys.ana)).expect(502, { message: 'Upstream unavailable' });
    expect(upstream.callsTo('/v1/groups')).toHaveLength(1);
    expectRefusedAt(lines, `groups.0${'.items.0'.repeat(9)}: items nest more than 8 levels deep here (the limit is 8)`);

    // Eight levels are within the limit.
    upstream.failNext({ status: 200, pathPrefix: '/v1/groups', body: { groups: [{ id: 'g', name: 'Group', groups: [], items: items[0].items }] } });
    const ok = await request(t.app).get(`/v1/groups?menus=${menuIds.breakfast}`).set(apiKey(keys.ana)).expect(200);
    expect(ok.body.groups.map((g: Json) => g.id)).toEqual(['g']);
  });

  test('/v1/menus accepts { "data": [...] } and { "items": [...] }', async () => {
    const record = { id: menuIds.allDay, name: 'All day', description: 'x', tags: ['a'], metadata: { groups: { total: 7 } } };
    const t1 = await connector();
    upstream.failNext({ status: 200, pathPrefix: '/v1/menus', body: { data: [record] } });
    const viaData = await request(t1.app).get('/v1/menus').set(apiKey(keys.ana)).expect(200);
    expect(viaData.body).toEqual({ metadata: { menus: { total: 1 } }, menus: [record] });

    const t2 = await connector();
    upstream.failNext({ status: 200, pathPrefix: '/v1/menus', body: { items: [record] } });
    const viaItems = await request(t2.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    expect(viaItems.body).toEqual([['All day', menuIds.allDay]]);
  });
});

describe('keys are forwarded per area, with the request id', () => {
  test('device area: Bearer, never X-API-Key', async () => {
    const t = await connector();
    await request(t.app).get('/devices').set(bearer(keys.ana)).set('X-Request-Id', 'fwd-dev-1').expect(200);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ana)).set('X-Request-Id', 'fwd-dev-2').expect(200);
    const calls = upstream.callsTo('/devices');
    expect(calls).toHaveLength(2);
    expect(calls[0]).toMatchObject({ authorization: `Bearer ${keys.ana}`, apiKey: undefined, requestId: 'fwd-dev-1' });
    expect(calls[1]).toMatchObject({ authorization: `Bearer ${keys.ana}`, apiKey: undefined, requestId: 'fwd-dev-2' });
    expect(decodeURIComponent(calls[1]!.path)).toBe('/devices/a4:83:e7:1f:2b:01');
  });

  test('menu area: X-API-Key, never Authorization', async () => {
    const t = await connector();
    await request(t.app).get('/v1/menus').set(apiKey(keys.ana)).set('X-Request-Id', 'fwd-menu-1').expect(200);
    await request(t.app).get('/v1/groups').set(apiKey(keys.ana)).set('X-Request-Id', 'fwd-menu-2').expect(200);
    const menus = upstream.callsTo('/v1/menus');
    const groups = upstream.callsTo('/v1/groups');
    expect(menus[0]).toMatchObject({ apiKey: keys.ana, authorization: undefined, requestId: 'fwd-menu-1' });
    expect(groups[0]).toMatchObject({ apiKey: keys.ana, authorization: undefined, requestId: 'fwd-menu-2' });
  });

  test('device options given X-API-Key reach the device area as Bearer, paging by 1000', async () => {
    const t = await connector();
    await request(t.app).get('/v1/devices/options').set(apiKey(keys.ana)).expect(200);
    const [call] = upstream.callsTo('/devices');
    expect(call).toMatchObject({ authorization: `Bearer ${keys.ana}`, apiKey: undefined });
    expect(call?.query).toMatchObject({ page: '1', page_size: '1000' });
  });

  test('without an incoming X-Request-Id the generated one is forwarded', async () => {
    const t = await connector();
    const res = await request(t.app).get('/v1/menus').set(apiKey(keys.ana)).expect(200);
    const id = res.headers['x-request-id'];
    expect(id).toEqual(expect.any(String));
    expect(upstream.callsTo('/v1/menus')[0]?.requestId).toBe(id);
  });

  test('answers are cached per key: another key makes its own upstream call and sees its own devices', async () => {
    const t = await connector();
    const ana = await request(t.app).get('/devices').set(bearer(keys.ana)).expect(200);
    const ben = await request(t.app).get('/devices').set(bearer(keys.ben)).expect(200);
    expect(ana.body.data.map((d: Json) => d.id)).not.toContain('A4:83:E7:1F:2B:04');
    expect(ben.body.data.map((d: Json) => d.id)).toEqual(['A4:83:E7:1F:2B:01', 'A4:83:E7:1F:2B:04', 'A4:83:E7:1F:2B:05']);
    expect(upstream.callsTo('/devices').map((c) => c.authorization)).toEqual([`Bearer ${keys.ana}`, `Bearer ${keys.ben}`]);
  });

  test('a malformed key is rejected without any upstream call', async () => {
    const t = await connector();
    await request(t.app).get('/devices').set(bearer('short')).expect(401, { message: 'Invalid API key' });
    await request(t.app).get('/v1/menus').set(apiKey('has space in the middle!')).expect(401, { message: 'Invalid API key' });
    await request(t.app)
      .get('/v1/me')
      .set(apiKey('x'.repeat(257)))
      .expect(401, { message: 'Invalid API key' });
    expect(upstream.calls).toHaveLength(0);
  });

  test('a missing key is answered locally', async () => {
    const t = await connector();
    const res = await request(t.app).get('/devices').expect(401, { message: 'Missing API key' });
    expect(res.headers['www-authenticate']).toBe('Bearer');
    await request(t.app).get('/v1/menus/options').expect(401, { message: 'Missing API key' });
    expect(upstream.calls).toHaveLength(0);
  });
});

describe('single-flight', () => {
  test('200 concurrent cold requests for /v1/menus/options make exactly 1 upstream call and get the same body', async () => {
    const t = await connector();
    const base = await listen(t);
    upstream.latencyMs = 100;
    const results = await Promise.all(
      Array.from({ length: 200 }, async () => {
        const res = await fetch(`${base}/v1/menus/options`, { headers: apiKey(keys.ana) });
        return { status: res.status, body: await res.text() };
      }),
    );
    expect(upstream.calls).toHaveLength(1);
    expect(upstream.callsTo('/v1/menus')).toHaveLength(1);
    expect(new Set(results.map((r) => r.status))).toEqual(new Set([200]));
    expect(new Set(results.map((r) => r.body)).size).toBe(1);
    expect(JSON.parse(results[0]!.body)).toEqual([
      ['All day', menuIds.allDay],
      ['Breakfast', menuIds.breakfast],
    ]);
  });

  test('concurrent cold requests on the device route share one upstream call', async () => {
    const t = await connector();
    const base = await listen(t);
    upstream.latencyMs = 50;
    const bodies = await Promise.all(Array.from({ length: 50 }, async () => (await fetch(`${base}/devices`, { headers: bearer(keys.ana) })).text()));
    expect(upstream.callsTo('/devices')).toHaveLength(1);
    expect(new Set(bodies).size).toBe(1);
  });
});

describe('retries', () => {
  test('503 then 200: success after one retry, the same X-Request-Id on both attempts', async () => {
    const t = await connector({ UPSTREAM_RETRIES: '2' });
    upstream.failNext({ status: 503, pathPrefix: '/devices' });
    const res = await request(t.app).get('/devices').set(bearer(keys.ana)).set('X-Request-Id', 'retry-req-1').expect(200);
    expect(res.body.total).toBe(4);
    const calls = upstream.callsTo('/devices');
    expect(calls).toHaveLength(2);
    expect(calls.map((c) => c.requestId)).toEqual(['retry-req-1', 'retry-req-1']);
    expect(calls.map((c) => c.authorization)).toEqual([`Bearer ${keys.ana}`, `Bearer ${keys.ana}`]);
  });

  test('a 5xx on the menu options path is retried too', async () => {
    const t = await connector();
    upstream.failNext({ status: 502, pathPrefix: '/v1/menus' });
    const res = await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).set('X-Request-Id', 'retry-req-2').expect(200);
    expect(res.body).toHaveLength(2);
    expect(upstream.callsTo('/v1/menus').map((c) => c.requestId)).toEqual(['retry-req-2', 'retry-req-2']);
  });

  test('429 with Retry-After: 1 → the second attempt waits about a second, then succeeds', async () => {
    const t = await connector({ UPSTREAM_TIMEOUT_MS: '2000' });
    upstream.failNext({ status: 429, headers: { 'Retry-After': '1' }, body: { message: 'Slow down' }, pathPrefix: '/v1/menus' });
    const started = Date.now();
    await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    const calls = upstream.callsTo('/v1/menus');
    expect(calls).toHaveLength(2);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(950);
    // About a second, not a Retry-After read as anything longer (a minute, 1,000 s).
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  test('a Retry-After longer than the timeout is not waited for: 502 with Retry-After, one call', async () => {
    const t = await connector({ UPSTREAM_TIMEOUT_MS: '500', UPSTREAM_RETRIES: '2' });
    upstream.failNext({ status: 503, headers: { 'Retry-After': '30' }, pathPrefix: '/v1/menus' });
    const started = Date.now();
    const res = await request(t.app).get('/v1/menus').set(apiKey(keys.ana)).expect(502, { message: 'Upstream unavailable' });
    expect(res.headers['retry-after']).toBe('30');
    // Not waited for: well under the 30 s asked (a generous half, for a busy machine).
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(upstream.callsTo('/v1/menus')).toHaveLength(1);
  });

  test('a hanging upstream → 504 Upstream timeout within timeout × attempts (+ backoff)', async () => {
    const t = await connector({ UPSTREAM_TIMEOUT_MS: '200', UPSTREAM_RETRIES: '1' });
    upstream.failAlways({ hang: true });
    const started = Date.now();
    const res = await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(504);
    const elapsed = Date.now() - started;
    expect(res.body).toEqual({ message: 'Upstream timeout' });
    expect(elapsed).toBeGreaterThanOrEqual(390);
    // Bounded by the timeouts, not by the hang (which never ends): 25 times them, for a busy machine.
    expect(elapsed).toBeLessThan(10_000);
    expect(upstream.callsTo('/v1/menus')).toHaveLength(2);
  });

  test('one hang then an answer: the retry succeeds', async () => {
    const t = await connector({ UPSTREAM_TIMEOUT_MS: '200', UPSTREAM_RETRIES: '1' });
    upstream.failNext({ hang: true, pathPrefix: '/devices' });
    const res = await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ana)).expect(200);
    expect(res.body.id).toBe('a4:83:e7:1f:2b:01');
    expect(upstream.callsTo('/devices')).toHaveLength(2);
  });

  test('5xx on every attempt → 502 after 1 + UPSTREAM_RETRIES calls', async () => {
    const t = await connector({ UPSTREAM_RETRIES: '2' });
    upstream.failAlways({ status: 500, pathPrefix: '/devices' });
    await request(t.app).get('/devices').set(bearer(keys.ana)).expect(502, { message: 'Upstream unavailable' });
    expect(upstream.callsTo('/devices')).toHaveLength(3);
  });

  test('a redirect is not followed: 502, one call', async () => {
    const t = await connector({ UPSTREAM_RETRIES: '2' });
    upstream.failNext({ status: 302, headers: { Location: 'http://127.0.0.1:1/elsewhere' }, pathPrefix: '/devices' });
    await request(t.app).get('/devices').set(bearer(keys.ana)).expect(502, { message: 'Upstream unavailable' });
    expect(upstream.calls).toHaveLength(1);
  });

  test('UPSTREAM_RETRIES=0 makes exactly one attempt', async () => {
    const t = await connector({ UPSTREAM_RETRIES: '0' });
    upstream.failAlways({ status: 503 });
    await request(t.app).get('/v1/groups').set(apiKey(keys.ana)).expect(502, { message: 'Upstream unavailable' });
    expect(upstream.calls).toHaveLength(1);
  });

  test('an upstream that refuses connections → 502 Upstream unavailable', async () => {
    const port = await closedPort();
    const t = await buildTestApp({ env: { DEVICE_API_URL: `http://127.0.0.1:${port}`, UPSTREAM_TIMEOUT_MS: '500', UPSTREAM_RETRIES: '1' } });
    apps.push(t);
    await request(t.app).get('/devices').set(bearer(keys.ana)).expect(502, { message: 'Upstream unavailable' });
  });

  test.each([
    [400, { message: 'Bad filter' }, 400, 'Bad filter'],
    [401, { message: 'Key revoked' }, 401, 'Key revoked'],
    [403, { message: 'Invalid scopes' }, 403, 'Invalid scopes'],
    [404, { message: 'Device not found' }, 404, 'Device not found'],
  ])('upstream %i is not retried and is relayed with its message', async (status, body, expected, message) => {
    const t = await connector({ UPSTREAM_RETRIES: '3' });
    upstream.failNext({ status, body, pathPrefix: '/devices' });
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ana)).expect(expected, { message });
    expect(upstream.callsTo('/devices')).toHaveLength(1);
  });

  test('an upstream error without a message gets the documented message (docs/api.md)', async () => {
    const t = await connector();
    upstream.failNext({ status: 404, body: { error: 'nope' }, pathPrefix: '/devices' });
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ana)).expect(404, { message: 'Not found' });
    upstream.failNext({ status: 401, body: '<html>401</html>', pathPrefix: '/v1/menus' });
    await request(t.app).get('/v1/menus').set(apiKey(keys.ben)).expect(401, { message: 'Invalid API key' });
  });
});

describe('bodies are validated', () => {
  const cases: Array<[string, string, Record<string, string>, unknown]> = [
    ['non-JSON with 200', '/devices', bearer(keys.ana), '<html>'],
    ['a device missing fields', '/devices/a4:83:e7:1f:2b:01', bearer(keys.ana), { id: 'a4:83:e7:1f:2b:01', name: 'Front counter' }],
    ['a total of the wrong type', '/devices', bearer(keys.ana), { total: '4', data: [] }],
    ['a device field of the wrong type', '/devices/a4:83:e7:1f:2b:01', bearer(keys.ana), upstreamDevice({ is_online: 'yes' })],
    ['a null where the interface has no null', '/devices/a4:83:e7:1f:2b:01', bearer(keys.ana), upstreamDevice({ name: null })],
    ['a timestamp that is not one', '/devices/a4:83:e7:1f:2b:01', bearer(keys.ana), upstreamDevice({ registered_at: 'yesterday' })],
    ['a fractional integer', '/devices/a4:83:e7:1f:2b:01', bearer(keys.ana), upstreamDevice({ wifi_signal_strength: -54.5 })],
    ['a device list that is not a list', '/devices', bearer(keys.ana), [upstreamDevice()]],
    ['a menus body with no array', '/v1/menus', apiKey(keys.ana), { menus: 'none' }],
    ['an empty body', '/v1/groups', apiKey(keys.ana), ''],
  ];

  test.each(cases)('%s → 502 Upstream unavailable, not retried', async (_name, path, headers, body) => {
    const t = await connector({ UPSTREAM_RETRIES: '2' });
    const upstreamPath = path.startsWith('/devices') ? '/devices' : path;
    upstream.failNext({ status: 200, body, pathPrefix: upstreamPath });
    await request(t.app).get(path).set(headers).expect(502, { message: 'Upstream unavailable' });
    expect(upstream.calls).toHaveLength(1);
  });

  test('an invalid body is not cached: the next request asks again and succeeds', async () => {
    const t = await connector();
    upstream.failNext({ status: 200, body: '<html>', pathPrefix: '/v1/menus' });
    await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(502);
    await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    expect(upstream.callsTo('/v1/menus')).toHaveLength(2);
  });
});

describe('an invalid record is left out of its answer, logged and counted; the rest is served', () => {
  const warnings = (lines: string[]) =>
    lines
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.msg === 'upstream record does not match the interface; left out of the answer');

  test('a device with an impossible timestamp: the list, the dropdown and the count of the others are served', async () => {
    const { t, lines } = await loggedConnector();
    const good = upstreamDevice({ id: 'A4:83:E7:1F:2B:02', name: 'Good screen' });
    const bad = upstreamDevice({ id: 'A4:83:E7:1F:2B:01', last_heartbeat_at: '2026-02-30T10:00:00Z' });
    upstream.failNext({ status: 200, pathPrefix: '/devices', body: { total: 2, data: [bad, good] } });
    const list = await request(t.app).get('/devices').set(bearer(keys.ana)).expect(200);
    expect(list.body.data.map((d: { id: string }) => d.id)).toEqual(['A4:83:E7:1F:2B:02']);
    expect(warnings(lines)).toEqual([
      expect.objectContaining({ level: 40, area: 'device', resource: 'device', id: 'A4:83:E7:1F:2B:01', field: 'last_heartbeat_at' }),
    ]);
    expect(lines.join('\n')).not.toContain(keys.ana);
    const scrape = await request(t.app).get('/metrics').expect(200);
    expect(scrape.text).toMatch(/^upstream_records_rejected_total\{area="device",resource="device"\} 1$/m);
  });

  // Already in the six-digit form the interface uses: no shortcut may skip the calendar check
  // (Date.parse rolls 30 February over to 2 March).
  test.each([
    ['30 February', 'last_heartbeat_at', '2026-02-30T10:00:00.000000Z'],
    ['31 April', 'registered_at', '2026-04-31T10:00:00.000000Z'],
    ['29 February of a common year', 'updated_at', '2025-02-29T00:00:00.000000Z'],
    ['hour 24', 'created_at', '2026-01-10T24:00:00.000000Z'],
  ])('a device with an impossible canonical timestamp (%s) is left out; alone it is a 502', async (_name, field, value) => {
    const { t, lines } = await loggedConnector();
    const good = upstreamDevice({ id: 'A4:83:E7:1F:2B:02', name: 'Good screen' });
    const bad = upstreamDevice({ id: 'A4:83:E7:1F:2B:01', [field]: value });
    upstream.failNext({ status: 200, pathPrefix: '/devices', body: { total: 2, data: [bad, good] } });
    const list = await request(t.app).get('/devices').set(bearer(keys.ana)).expect(200);
    expect(list.body.data.map((d: { id: string }) => d.id)).toEqual(['A4:83:E7:1F:2B:02']);
    expect(JSON.stringify(list.body)).not.toContain(value);
    expect(warnings(lines).map((w) => [w.resource, w.id, w.field])).toEqual([['device', 'A4:83:E7:1F:2B:01', field]]);

    upstream.failNext({ status: 200, pathPrefix: '/devices', body: bad });
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ana)).expect(502, { message: 'Upstream unavailable' });
  });

  test('a group with a missing field is left out with its subtree; its siblings are served', async () => {
    const { t, lines } = await loggedConnector();
    const groups = [
      { id: 'g-ok', name: 'Kept', description: null, tags: [], groups: [{ id: 'g-child-bad', tags: [], groups: [], items: [] }], items: [] },
      { id: 'g-bad', name: 'Broken', groups: [], items: [{ id: 'i', name: 'No stock flag' }] },
    ];
    upstream.failNext({ status: 200, pathPrefix: '/v1/groups', body: { groups } });
    const res = await request(t.app).get(`/v1/groups?menus=${menuIds.allDay}`).set(apiKey(keys.ana)).expect(200);
    expect(res.body.groups.map((g: { id: string; groups: unknown[] }) => [g.id, g.groups.length])).toEqual([['g-ok', 0]]);
    expect(res.body.metadata).toEqual({ groups: { total: 1 } });
    expect(warnings(lines).map((w) => [w.resource, w.id, w.field])).toEqual([
      ['group', 'g-child-bad', 'name'],
      ['group', 'g-bad', 'items.0.inStock'],
    ]);
  });

  test('a menu record of the wrong type is left out of the menu list', async () => {
    const { t, lines } = await loggedConnector();
    upstream.failNext({
      status: 200,
      pathPrefix: '/v1/menus',
      body: {
        menus: [
          { id: 7, name: 'x' },
          { id: menuIds.allDay, name: 'All day', metadata: { groups: { total: 1 } } },
        ],
      },
    });
    const res = await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    expect(res.body).toEqual([['All day', menuIds.allDay]]);
    expect(warnings(lines).map((w) => [w.resource, w.id, w.field])).toEqual([['menu', null, 'id']]);
  });
});

describe('relayed key verdicts', () => {
  test('upstream 401 "Key revoked" is relayed, remembered for OPTIONS_CACHE_TTL_MS, then the key is sent again', async () => {
    const t = await connector({ OPTIONS_CACHE_TTL_MS: '30000' });
    upstream.failNext({ status: 401, body: { message: 'Key revoked' }, pathPrefix: '/devices' });
    await request(t.app).get('/devices').set(bearer(keys.ana)).expect(401, { message: 'Key revoked' });
    expect(upstream.calls).toHaveLength(1);

    // Remembered: answered locally, in every area, without a new upstream call.
    await request(t.app).get('/devices').set(bearer(keys.ana)).expect(401, { message: 'Key revoked' });
    await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(401, { message: 'Key revoked' });
    await request(t.app).get('/v1/me').set(apiKey(keys.ana)).expect(401, { message: 'Key revoked' });
    expect(upstream.calls).toHaveLength(1);

    // Another key is unaffected.
    await request(t.app).get('/devices').set(bearer(keys.ben)).expect(200);
    expect(upstream.calls).toHaveLength(2);

    t.clock.advance(29_999);
    await request(t.app).get('/devices').set(bearer(keys.ana)).expect(401, { message: 'Key revoked' });
    expect(upstream.callsTo('/devices').filter((c) => c.authorization === `Bearer ${keys.ana}`)).toHaveLength(1);

    t.clock.advance(2);
    const res = await request(t.app).get('/devices').set(bearer(keys.ana)).expect(200);
    expect(res.body.total).toBe(4);
    expect(upstream.callsTo('/devices').filter((c) => c.authorization === `Bearer ${keys.ana}`)).toHaveLength(2);
  });

  test('a real upstream rejection of an unknown key is relayed and remembered', async () => {
    const t = await connector();
    const unknown = 'sk_test_nobody_knows_me_0000000';
    await request(t.app).get('/v1/groups').set(apiKey(unknown)).expect(401, { message: 'Invalid API key' });
    await request(t.app).get('/v1/groups').set(apiKey(unknown)).expect(401, { message: 'Invalid API key' });
    expect(upstream.calls).toHaveLength(1);
  });

  test('upstream 403 (key lacks the scope) is relayed', async () => {
    const t = await connector();
    await request(t.app).get('/devices').set(bearer(keys.anaMenuOnly)).expect(403, { message: 'Invalid scopes' });
    await request(t.app).get('/v1/devices/options').set(apiKey(keys.anaMenuOnly)).expect(403, { message: 'Invalid scopes' });
    await request(t.app).get('/v1/menus').set(apiKey(keys.anaMenuOnly)).expect(200);
  });

  test('upstream 404 Device not found is relayed for an inaccessible or unknown device', async () => {
    const t = await connector();
    await request(t.app).get('/devices/A4:83:E7:1F:2B:04').set(bearer(keys.ana)).expect(404, { message: 'Device not found' });
    await request(t.app).get('/devices/ff:ff:ff:ff:ff:ff').set(bearer(keys.ana)).expect(404, { message: 'Device not found' });
    expect(upstream.callsTo('/devices/').map((c) => decodeURIComponent(c.path))).toEqual(['/devices/a4:83:e7:1f:2b:04', '/devices/ff:ff:ff:ff:ff:ff']);
  });

  test('an unknown or foreign menu id in upstream mode is 404 Menu not found', async () => {
    const t = await connector();
    await request(t.app).get(`/v1/menus/${menuIds.otherAccount}/groups/options`).set(apiKey(keys.ana)).expect(404, { message: 'Menu not found' });
    await request(t.app).get('/v1/menus/no-such-menu/groups/options').set(apiKey(keys.ana)).expect(404, { message: 'Menu not found' });
  });
});

describe('caching', () => {
  test('stale-if-error: past 2×TTL with the upstream down → the old body marked STALE; past 10×TTL → 502', async () => {
    const t = await connector({ OPTIONS_CACHE_TTL_MS: '1000', UPSTREAM_RETRIES: '0' });
    const warm = await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    expect(warm.headers['x-cache']).toBe('MISS');
    expect(upstream.calls).toHaveLength(1);

    upstream.failAlways({ status: 503 });
    t.clock.advance(2_001);
    const stale = await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.text).toBe(warm.text);
    expect(upstream.calls).toHaveLength(2); // the synchronous refresh was tried

    t.clock.advance(7_000); // age 9 001 ms < 10×TTL
    const stillStale = await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    expect(stillStale.headers['x-cache']).toBe('STALE');
    expect(stillStale.text).toBe(warm.text);

    t.clock.advance(1_000); // age 10 001 ms
    await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(502, { message: 'Upstream unavailable' });
  });

  test('stale-if-error is for an upstream that is down, not for its verdicts: 401 and 404 are relayed', async () => {
    const t = await connector({ OPTIONS_CACHE_TTL_MS: '1000', DEVICE_CACHE_TTL_MS: '1000', UPSTREAM_RETRIES: '0' });
    await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ben)).expect(200);
    t.clock.advance(3_000);
    upstream.failNext({ status: 401, body: { message: 'Key revoked' }, pathPrefix: '/v1/menus' });
    await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(401, { message: 'Key revoked' });
    upstream.failNext({ status: 404, body: { message: 'Device not found' }, pathPrefix: '/devices' });
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ben)).expect(404, { message: 'Device not found' });
  });

  test('a 404 met by a background refresh drops the stale copy', async () => {
    const t = await connector({ DEVICE_CACHE_TTL_MS: '1000', UPSTREAM_RETRIES: '0' });
    const path = '/devices/a4:83:e7:1f:2b:05';
    await request(t.app).get(path).set(bearer(keys.ana)).expect(200);
    t.clock.advance(1_500);
    upstream.failNext(
      { status: 404, body: { message: 'Device not found' }, pathPrefix: '/devices' },
      { status: 404, body: { message: 'Device not found' }, pathPrefix: '/devices' },
    );
    await request(t.app).get(path).set(bearer(keys.ana)).expect(200); // stale-while-revalidate
    // While the refresh runs, requests join it; once it met the 404 the copy is gone, so the
    // next request asks again (and meets the second 404) instead of being served STALE.
    await eventually(async () => {
      const res = await request(t.app).get(path).set(bearer(keys.ana));
      return res.status === 404 && res.body.message === 'Device not found';
    });
    expect(upstream.callsTo('/devices')).toHaveLength(3);
  });

  test('stale-if-error with a hanging upstream, then 504 when too old', async () => {
    const t = await connector({ OPTIONS_CACHE_TTL_MS: '1000', UPSTREAM_TIMEOUT_MS: '100', UPSTREAM_RETRIES: '0' });
    const warm = await request(t.app).get(`/v1/menus/${menuIds.allDay}/groups/options`).set(apiKey(keys.ana)).expect(200);
    upstream.failAlways({ hang: true });
    t.clock.advance(5_000);
    const stale = await request(t.app).get(`/v1/menus/${menuIds.allDay}/groups/options`).set(apiKey(keys.ana)).expect(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.text).toBe(warm.text);
    t.clock.advance(5_001);
    await request(t.app).get(`/v1/menus/${menuIds.allDay}/groups/options`).set(apiKey(keys.ana)).expect(504, { message: 'Upstream timeout' });
  });

  test('stale-if-error on the device route (DEVICE_CACHE_TTL_MS)', async () => {
    const t = await connector({ DEVICE_CACHE_TTL_MS: '1000', UPSTREAM_RETRIES: '0' });
    const warm = await request(t.app).get('/devices').set(bearer(keys.ana)).expect(200);
    upstream.failAlways({ status: 500 });
    t.clock.advance(3_000);
    const stale = await request(t.app).get('/devices').set(bearer(keys.ana)).expect(200);
    expect(stale.body).toEqual(warm.body);
    t.clock.advance(7_001);
    await request(t.app).get('/devices').set(bearer(keys.ana)).expect(502, { message: 'Upstream unavailable' });
  });

  test('HIT within TTL; past TTL a STALE answer and one background refetch; past 2×TTL a synchronous refetch', async () => {
    const t = await connector({ OPTIONS_CACHE_TTL_MS: '1000' });
    const path = '/v1/menus/options';
    const first = await request(t.app).get(path).set(apiKey(keys.ana)).expect(200);
    expect(first.headers['x-cache']).toBe('MISS');
    expect(first.headers['cache-control']).toBe('private, max-age=1');

    t.clock.advance(999);
    const hit = await request(t.app).get(path).set(apiKey(keys.ana)).expect(200);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(upstream.calls).toHaveLength(1);

    // Past the TTL: served at once, refreshed in the background with the upstream's new data.
    upstream.failNext({
      status: 200,
      pathPrefix: '/v1/menus',
      body: { menus: [{ id: menuIds.allDay, name: 'All day (renamed)', metadata: { groups: { total: 2 } } }] },
    });
    t.clock.advance(2);
    const stale = await request(t.app).get(path).set(apiKey(keys.ana)).expect(200);
    expect(stale.headers['x-cache']).toBe('STALE');
    expect(stale.text).toBe(first.text);
    await eventually(async () => {
      const res = await request(t.app).get(path).set(apiKey(keys.ana));
      return res.headers['x-cache'] === 'HIT' && res.body[0]?.[0] === 'All day (renamed)';
    });
    expect(upstream.callsTo('/v1/menus')).toHaveLength(2);

    // Past 2×TTL: fetched before answering.
    t.clock.advance(2_001);
    const miss = await request(t.app).get(path).set(apiKey(keys.ana)).expect(200);
    expect(miss.headers['x-cache']).toBe('MISS');
    expect(miss.body).toEqual([
      ['All day', menuIds.allDay],
      ['Breakfast', menuIds.breakfast],
    ]);
    expect(upstream.callsTo('/v1/menus')).toHaveLength(3);
  });

  test('the device route refetches after DEVICE_CACHE_TTL_MS', async () => {
    const t = await connector({ DEVICE_CACHE_TTL_MS: '1000' });
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ana)).expect(200);
    await request(t.app).get('/devices/A4:83:E7:1F:2B:01').set(bearer(keys.ana)).expect(200);
    expect(upstream.callsTo('/devices')).toHaveLength(1);
    t.clock.advance(2_001);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set(bearer(keys.ana)).expect(200);
    expect(upstream.callsTo('/devices')).toHaveLength(2);
  });

  test('OPTIONS_CACHE_TTL_MS=0 caches nothing', async () => {
    const t = await connector({ OPTIONS_CACHE_TTL_MS: '0' });
    await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    await request(t.app).get('/v1/menus/options').set(apiKey(keys.ana)).expect(200);
    expect(upstream.callsTo('/v1/menus')).toHaveLength(2);
  });
});

describe('/v1/me in upstream mode', () => {
  test('→ {"key":{"scopes":null},"account":null} after the upstream accepted the key', async () => {
    const t = await connector();
    const res = await request(t.app).get('/v1/me').set(apiKey(keys.ana)).set('X-Request-Id', 'me-1').expect(200);
    expect(res.body).toEqual({ key: { scopes: null }, account: null });
    expect(upstream.calls.length).toBeGreaterThanOrEqual(1);
    expect(upstream.calls[0]).toMatchObject({ apiKey: keys.ana, requestId: 'me-1' });
  });

  test('also with a Bearer key', async () => {
    const t = await connector();
    await request(t.app)
      .get('/v1/me')
      .set(bearer(keys.ben))
      .expect(200, { key: { scopes: null }, account: null });
  });

  test('upstream 401 is relayed with its message', async () => {
    const t = await connector();
    upstream.failNext({ status: 401, body: { message: 'Key revoked' } });
    await request(t.app).get('/v1/me').set(apiKey(keys.ana)).expect(401, { message: 'Key revoked' });
    const unknown = 'sk_test_not_a_real_key_00000000';
    await request(t.app).get('/v1/me').set(apiKey(unknown)).expect(401, { message: 'Invalid API key' });
  });

  test('device upstream only: the key is checked against the device area; a 403 still means the key is known', async () => {
    const t = await buildTestApp({ env: { DEVICE_API_URL: upstream.baseUrl, UPSTREAM_TIMEOUT_MS: '1000', UPSTREAM_RETRIES: '0' } });
    apps.push(t);
    await request(t.app)
      .get('/v1/me')
      .set(apiKey(keys.anaMenuOnly))
      .expect(200, { key: { scopes: null }, account: null });
    expect(upstream.callsTo('/devices')[0]).toMatchObject({ authorization: `Bearer ${keys.anaMenuOnly}` });
    await request(t.app).get('/v1/me').set(apiKey('sk_test_not_a_real_key_11111111')).expect(401, { message: 'Invalid API key' });
  });

  test('upstream down → 502, not a success', async () => {
    const t = await connector({ UPSTREAM_RETRIES: '0' });
    upstream.failAlways({ status: 503 });
    await request(t.app).get('/v1/me').set(apiKey(keys.ana)).expect(502, { message: 'Upstream unavailable' });
  });
});

describe('/readyz', () => {
  test('reports both upstreams ok', async () => {
    const t = await connector();
    const res = await request(t.app).get('/readyz').expect(200);
    expect(res.body.checks).toEqual({ database: 'ok', device_upstream: 'ok', menu_upstream: 'ok' });
  });

  test('an upstream on a closed port makes readyz 503 and names it', async () => {
    const port = await closedPort();
    const t = await buildTestApp({
      env: { DEVICE_API_URL: `http://127.0.0.1:${port}`, MENU_API_URL: upstream.baseUrl, UPSTREAM_TIMEOUT_MS: '500' },
    });
    apps.push(t);
    const res = await request(t.app).get('/readyz').expect(503);
    expect(res.body.checks.database).toBe('ok');
    expect(res.body.checks.menu_upstream).toBe('ok');
    expect(res.body.checks.device_upstream).not.toBe('ok');
  });

  test('an upstream that stopped: ready while it answered within the last minute, then 503', async () => {
    const other = await new FakeUpstream(catalog()).start();
    const t = await buildTestApp({ env: { DEVICE_API_URL: other.baseUrl, UPSTREAM_TIMEOUT_MS: '500', UPSTREAM_RETRIES: '0' } });
    apps.push(t);
    await request(t.app).get('/devices').set(bearer(keys.ana)).expect(200);
    await other.stop();
    await request(t.app).get('/readyz').expect(200);
    t.clock.advance(61_000);
    const res = await request(t.app).get('/readyz').expect(503);
    expect(res.body.checks.device_upstream).not.toBe('ok');
  });
});

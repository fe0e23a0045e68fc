import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuild, PipedServer } from '../helpers/server-process.js';

/**
 * No log line carries a raw request path or upstream URL (docs/service.md): a user who pastes
 * their key where a device id goes (`GET /devices/<key>`) must not find it in the log, on
 * any fault path of the upstream. The real process at LOG_LEVEL=trace; all of its stdout
 * and stderr is searched.
 */

type Fault = 'timeout' | '5xx' | 'garbage' | '401' | 'oversize' | 'stale';

/** One key per fault (401 verdicts and caches are per key); lower case, as ids are sent. */
const keyFor = (fault: string) => `sk_live_${fault}_${randomBytes(8).toString('hex')}`;
const faults: Fault[] = ['timeout', '5xx', 'garbage', '401', 'oversize', 'stale'];
const keys = Object.fromEntries(faults.map((f) => [f, keyFor(f)])) as Record<Fault, string>;
const downKey = keyFor('down');

let tmp: string;
let upstream: Server;
let upstreamUrl = '';
const served = new Set<string>();
const servers: PipedServer[] = [];

/** An upstream that misbehaves according to the key it is called with. */
function misbehave(req: IncomingMessage, res: ServerResponse): void {
  const key = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const fault = faults.find((f) => keys[f] === key);
  if (fault === 'timeout') return; // never answers
  if (fault === '5xx') return void res.writeHead(503).end('{"message":"down"}');
  if (fault === 'garbage') return void res.writeHead(200, { 'content-type': 'application/json' }).end('<html>oops</html>');
  if (fault === '401') return void res.writeHead(401).end('{"message":"Invalid API key"}');
  if (fault === 'oversize') return void res.writeHead(200, { 'content-length': String(64 * 1024 * 1024) }).write('{');
  if (fault === 'stale' && !served.has(key)) {
    // Good once (so the cache holds it), broken afterwards (so its background refresh fails).
    served.add(key);
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(device(key)));
  }
  res.writeHead(500).end('{"message":"boom"}');
}

function device(id: string): Record<string, unknown> {
  return {
    id,
    name: 'Front counter',
    timezone: 'UTC',
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
  };
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-log-hygiene-'));
  upstream = createServer(misbehave);
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
  await ensureBuild();
}, 180_000);

afterEach(() => {
  for (const s of servers.splice(0)) s.kill();
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
  rmSync(tmp, { recursive: true, force: true });
});

async function connector(deviceApiUrl?: string): Promise<PipedServer> {
  const s = new PipedServer({
    LOG_LEVEL: 'trace',
    DATABASE_PATH: join(tmp, `db-${servers.length}-${Date.now()}.sqlite`),
    ...(deviceApiUrl ? { DEVICE_API_URL: deviceApiUrl } : {}),
    UPSTREAM_TIMEOUT_MS: '300',
    UPSTREAM_RETRIES: '1',
    DEVICE_CACHE_TTL_MS: '200',
  });
  servers.push(s);
  return s.started();
}

function get(s: PipedServer, path: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port: s.port, path, headers }, (res) => {
      res.resume().on('end', () => resolve(res.statusCode!));
    })
      .on('error', reject)
      .end();
  });
}

/** `GET /devices/<key>` with that same key as Bearer: the user pasted their key as the id. */
function getDeviceNamedAfter(s: PipedServer, key: string): Promise<number> {
  return get(s, `/devices/${key}`, { authorization: `Bearer ${key}` });
}

/** Everything the process wrote, once it has stopped. */
async function allOutput(s: PipedServer): Promise<string> {
  expect(await s.terminate(12_000)).toMatchObject({ code: 0 });
  await s.waitFor(/"msg":"stopped"/, 2_000);
  return s.output() + s.stderr();
}

function expectNoKey(log: string, key: string): void {
  expect(log).not.toContain(key);
  expect(log).not.toContain(key.slice(8)); // the secret part, whatever surrounds it
  expect(log).not.toContain(`/devices/${key}`);
}

describe('a key used as a device id never reaches the log', () => {
  test('upstream timeout, 5xx, garbage body, 401, oversize body and a failed background refresh', async () => {
    const s = await connector(upstreamUrl);
    expect(await getDeviceNamedAfter(s, keys.timeout)).toBe(504);
    expect(await getDeviceNamedAfter(s, keys['5xx'])).toBe(502);
    expect(await getDeviceNamedAfter(s, keys.garbage)).toBe(502);
    expect(await getDeviceNamedAfter(s, keys['401'])).toBe(401);
    expect(await getDeviceNamedAfter(s, keys.oversize)).toBe(502);
    expect(await getDeviceNamedAfter(s, keys.stale)).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 250)); // past DEVICE_CACHE_TTL_MS
    expect(await getDeviceNamedAfter(s, keys.stale)).toBe(200); // stale copy; refresh fails behind it
    await s.waitFor(/background refresh failed/, 2_000);
    const log = await allOutput(s);
    for (const key of Object.values(keys)) expectNoKey(log, key);
    // The fault paths were really taken, and logged by route pattern.
    for (const msg of ['upstream attempt failed', 'upstream body is not JSON', 'upstream body too large', 'background refresh failed']) {
      expect(log).toContain(`"msg":"${msg}"`);
    }
    expect(log).toContain('"route":"/devices/:id"');
    expect(log).toContain('"cacheKey":');
  }, 60_000);

  test('upstream down (connection refused)', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const s = await connector(`http://127.0.0.1:${port}`);
    expect(await getDeviceNamedAfter(s, downKey)).toBe(502);
    const log = await allOutput(s);
    expectNoKey(log, downKey);
    expect(log).toMatch(/"msg":"upstream attempt failed"/);
    expect(log).toContain('network error: ECONNREFUSED');
  }, 60_000);
});

describe('requests no Express route matches', () => {
  test('/docs assets are logged as /docs/assets/*, unknown paths as (unmatched), never by their path', async () => {
    const s = await connector();
    const pasted = keyFor('docs');
    expect(await get(s, '/docs/assets/swagger-ui.css')).toBe(200);
    expect(await get(s, `/docs/assets/${pasted}`)).toBe(404);
    expect(await get(s, `/${pasted}`)).toBe(404);
    const log = await allOutput(s);
    const routes = log
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; route?: string; status?: number })
      .filter((entry) => entry.msg === 'request')
      .map((entry) => [entry.route, entry.status]);
    expect(routes).toEqual([
      ['/docs/assets/*', 200],
      ['(unmatched)', 404],
      ['(unmatched)', 404],
    ]);
    expectNoKey(log, pasted);
  }, 60_000);
});

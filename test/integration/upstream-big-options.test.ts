import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { hashKey } from '../../src/auth/keys.js';
import type { OptionSource } from '../../src/manifest/schema.js';
import type { Principal } from '../../src/sources/types.js';
import { turnsDuring } from '../helpers/event-loop.js';

/**
 * Upstream mode, one key with 100,000 devices (docs/options.md, "Memory and the event loop"):
 * the whole device dropdown (no `limit`) is answered without stalling the event loop, and the
 * pages rendered from the cached list stay within the cache's byte bound.
 */

const COUNT = 100_000;
/** The cache's byte bound (CachedLoader's default, docs/upstream.md). */
const MAX_BYTES = 64 * 1024 * 1024;

const hex = (n: number) => n.toString(16).toUpperCase().padStart(2, '0');
/** Device `n`: a name with quotes, a backslash, accents and a character beyond Latin-1. */
const idOf = (n: number) => `02:5C:00:${hex(n >>> 16)}:${hex((n >>> 8) & 255)}:${hex(n & 255)}`;
const nameOf = (n: number) => `Écran "${n}" \\ café ☕`;
/** The upstream lists the devices scrambled (7919 is prime to 100,000): sorting is real work. */
const numberAt = (k: number) => (k * 7919) % COUNT;

function device(n: number): Record<string, unknown> {
  const at = '2025-01-10T09:00:00.000000Z';
  return {
    id: idOf(n),
    name: nameOf(n),
    timezone: 'Europe/Paris',
    screen_resolution: '1920x1080',
    screen_orientation: 'normal',
    registered_at: at,
    published_at: null,
    last_heartbeat_at: null,
    is_online: true,
    offline_startup: false,
    offline_startup_delay_minutes: 0,
    open_dev_tools: false,
    display_connected: true,
    connection_type: 'ethernet',
    wifi_ssid: null,
    wifi_signal_strength: null,
    updated_at: at,
    created_at: at,
  };
}

/** `GET /devices?page=&page_size=` of the device interface, generated on the fly. */
function devicePage(query: Record<string, unknown>): unknown {
  const page = Number(query.page ?? 1);
  const size = Number(query.page_size ?? 100);
  const from = Math.min(COUNT, (page - 1) * size);
  const to = Math.min(COUNT, from + size);
  return { total: COUNT, data: Array.from({ length: to - from }, (_, i) => device(numberAt(from + i))) };
}

let upstream: FakeUpstream;
let t: TestApp;
let server: Server;
let base: string;
let source: OptionSource;
const principal: Principal = {
  keyHash: hashKey(keys.ana),
  key: keys.ana,
  scopes: null,
  keyId: null,
  keyName: null,
  userId: null,
  accountId: null,
  accountName: null,
};

beforeAll(async () => {
  upstream = await new FakeUpstream(catalog()).start();
  upstream.failAlways({ pathPrefix: '/devices', answer: devicePage });
  t = await buildTestApp({ env: { DEVICE_API_URL: upstream.baseUrl, MENU_API_URL: upstream.baseUrl } });
  source = t.services.manifest.optionSources.find((s) => s.resource === 'devices')!;
  server = t.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}, 60_000);

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t?.close();
  await upstream?.stop();
});

/** One dropdown request over real HTTP; the body is read as bytes (parsing it is the test's business, after the timer). */
async function options(query: string): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${base}/v1/devices/options${query}`, { headers: { Authorization: `Bearer ${keys.ana}` } });
  const bytes = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, text: bytes.toString('utf8') };
}

describe('the device dropdown of a key with 100,000 upstream devices', () => {
  const sorted = Array.from({ length: COUNT }, (_, n) => [nameOf(n), idOf(n).toLowerCase()]);

  test('without limit: all 100,000 in label order, from 100 upstream pages', async () => {
    const res = await options('');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-cache')).toBe('MISS');
    expect(res.headers.get('x-total-count')).toBe(String(COUNT));
    // Compared as text: the same bytes as the list in order, without a 100,000-line diff on failure.
    expect(res.text === JSON.stringify(sorted)).toBe(true);
    expect(upstream.callsTo('/devices')).toHaveLength(COUNT / 1000);
  }, 60_000);

  test('the whole cached list in another format: rendered again, in slices, to the same bytes', async () => {
    const res = await options('?format=n8n');
    expect(res.headers.get('x-cache')).toBe('HIT');
    expect(res.text === JSON.stringify({ results: sorted.map(([name, value]) => ({ name, value })) })).toBe(true);
  }, 60_000);

  /*
   * How long the loop stalls is a wall-clock figure, and on a shared machine it is noisy (a
   * timer's longest gap while rendering 100,000 entries: 100-340 ms in one piece, 10-47 ms in
   * slices, by how busy the cores are; inside this suite, with the fake upstream in the same
   * process, more). So the test counts what slicing does instead: turns of the event loop
   * during the render, which a render in one piece does not let happen at all.
   */
  test('the render yields to the event loop between slices: one turn about every 2,000 entries', async () => {
    const { turns, result } = await turnsDuring(() => t.services.options.render(source, principal, {}, { format: 'objects', offset: 0 }));
    const { rendered } = result;
    expect(rendered.total).toBe(COUNT);
    // 50 slices: 49 yields, each letting one turn of the loop (its timers and I/O) run.
    expect(turns).toBeGreaterThanOrEqual(45);
  }, 60_000);

  test('pages rendered for many `q` of the big list stay within the cache byte bound, and the list stays cached', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const calls = upstream.callsTo('/devices').length;
    // Each matches every device (`ecran "n" \ cafe ☕` folded): a whole-list page of about 4.5 MB.
    const variants = ['e', 'c', 'r', 'a', 'n', 'ec', 'cr', 'ra', 'an', 'ecr', 'cra', 'ran', 'ecra', 'cran', 'ecran', 'ca', 'af', 'fe', 'caf', 'cafe'];
    const bodies: Array<{ ref: WeakRef<Buffer>; bytes: number }> = [];
    for (const q of variants) {
      const { rendered } = await t.services.options.render(source, principal, {}, { format: 'tuples', q, offset: 0 });
      expect(rendered.total).toBe(COUNT);
      bodies.push({ ref: new WeakRef(rendered.body), bytes: rendered.body.length });
    }
    const made = bodies.reduce((n, b) => n + b.bytes, 0);
    expect(made).toBeGreaterThan(MAX_BYTES);
    await new Promise((resolve) => setImmediate(resolve));
    gc();
    // What is still held: the bodies nothing but the cache refers to any more.
    const held = bodies.filter((b) => b.ref.deref() !== undefined).reduce((n, b) => n + b.bytes, 0);
    expect(held).toBeLessThanOrEqual(MAX_BYTES);
    // The cache counts what it holds (the list and its pages) and keeps that under its bound.
    const loaded = await t.services.options.list(source, principal, {});
    expect(loaded.state).toBe('HIT');
    const { bytes, maxBytes } = loaded.cache.usage;
    expect(maxBytes).toBe(MAX_BYTES);
    expect(bytes).toBeLessThanOrEqual(maxBytes);
    expect(bytes).toBeGreaterThanOrEqual(held + COUNT * 128);
    // The pages were evicted, not the list: no new upstream call.
    expect(upstream.callsTo('/devices')).toHaveLength(calls);
  }, 120_000);
});

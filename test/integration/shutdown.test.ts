import { afterAll, beforeAll, expect, test } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hashKey } from '../../src/auth/keys.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { waitFor } from '../helpers/processes.js';
import { freshRequest } from '../helpers/fresh-request.js';
import { ensureBuild, PipedServer } from '../helpers/server-process.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * Shutdown (docs/service.md): SIGTERM ends the real process (`node dist/src/main.js`, upstream
 * mode, a database file) within its budget whatever runs: a background poll stops at its next
 * page and records nothing, a request that cannot finish gets the 10 s grace period, a delivery
 * that cannot finish is left leased and the process exits 15 s after the signal. Every wait is
 * bounded; PipedServer kills its process after 60 s whatever happens.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const graceMs = 10_000;
const budgetMs = 15_000;

let tmp: string;
const servers: PipedServer[] = [];
const upstreams: FakeUpstream[] = [];
const receivers: Server[] = [];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-shutdown-'));
  await ensureBuild();
}, 180_000);

// The tests run at once (each waits out a grace period or a budget of its own), so what they
// started is stopped after all of them.
afterAll(async () => {
  for (const server of servers.splice(0)) server.kill();
  for (const receiver of receivers.splice(0)) {
    receiver.closeAllConnections();
    receiver.close();
  }
  for (const upstream of upstreams.splice(0)) await upstream.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function upstream(): Promise<FakeUpstream> {
  const up = await new FakeUpstream(catalog()).start();
  upstreams.push(up);
  return up;
}

async function start(dbPath: string, up: FakeUpstream, env: Record<string, string> = {}): Promise<PipedServer> {
  const server = new PipedServer({
    DATABASE_PATH: dbPath,
    DEVICE_API_URL: up.baseUrl,
    MENU_API_URL: up.baseUrl,
    CONNECTOR_SECRET: 'c0'.repeat(32),
    POLL_INTERVAL_MS: '1000',
    UPSTREAM_RETRIES: '0',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'info',
    ...env,
  });
  servers.push(server);
  return server.started();
}

/** One request with Ana's key on a fresh connection; rejects with the socket's error if the connection is cut. */
function call(server: PipedServer, path: string, options: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: Json }> {
  return freshRequest(`http://127.0.0.1:${server.port}${path}`, { ...options, headers: { 'X-API-Key': keys.ana } });
}

/** Ana's device list as the upstream answers it, with the first device's status flipped. */
async function flippedPage(up: FakeUpstream): Promise<{ page: { total: number; data: Json[] }; id: string; type: string }> {
  const res = await fetch(`${up.baseUrl}/devices?page=1&page_size=1000`, { headers: { authorization: `Bearer ${keys.ana}` } });
  const page = (await res.json()) as { total: number; data: Json[] };
  const [first, ...rest] = page.data;
  const flipped = { ...first, is_online: !first.is_online };
  // A full page (a page before the last that is short fails the poll): the rest made up of copies.
  const hex = (n: number) => n.toString(16).padStart(2, '0').toUpperCase();
  const filler = Array.from({ length: 1000 - page.data.length }, (_, i) => ({ ...first, id: `0E:00:00:00:${hex(i >> 8)}:${hex(i & 255)}` }));
  return {
    page: { total: page.total, data: [flipped, ...rest, ...filler] },
    id: first.id.toLowerCase(),
    type: flipped.is_online ? 'device.online' : 'device.offline',
  };
}

/** Background polls: upstream calls the connector made with its own `poll-` request id. */
const pollCalls = (up: FakeUpstream) => up.callsTo('/devices').filter((c) => c.requestId?.startsWith('poll-'));

function logLines(server: PipedServer): Json[] {
  return server
    .output()
    .split('\n')
    .flatMap((line) => {
      try {
        return [JSON.parse(line)];
      } catch {
        return [];
      }
    });
}

function readDb<T>(dbPath: string, read: (db: BetterSqlite3.Database) => T): T {
  const db = new BetterSqlite3(dbPath, { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

test.concurrent(
  'SIGTERM during a 100-page upstream poll: the poll stops at once and records nothing, exit 0; after a restart the key is polled as usual',
  async () => {
    const dbPath = join(mkdtempSync(join(tmp, 'poll-')), 'connector.db');
    const up = await upstream();
    // Leases of 1 s + 2 s × 1 attempt: a key left leased by the stopped poll is free again soon.
    const env = { UPSTREAM_TIMEOUT_MS: '2000' };
    const first = await start(dbPath, up, env);
    expect((await call(first, '/v1/triggers/device-status')).status).toBe(200); // enrols and baselines the key
    const keyHash = hashKey(keys.ana);
    const baseline = readDb(dbPath, (db) => db.prepare('SELECT device_id, status FROM device_snapshots WHERE key_hash = ? ORDER BY device_id').all(keyHash));
    expect(baseline).toHaveLength(4);

    // From now on the account has 100,000 devices (100 pages of 1,000), each page answered after
    // 500 ms, and one device changed: a poll that ran to its end would record an event.
    const { page, id, type } = await flippedPage(up);
    up.failAlways({ pathPrefix: '/devices', status: 200, body: { ...page, total: 100_000 }, delayMs: 500 });
    const before = pollCalls(up).length;
    await waitFor('a background poll past its first pages', () => pollCalls(up).length >= before + 5, 10_000);

    const exit = await first.terminate(8_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
    // The old poller read all 100 pages first (about 13 s): half of that leaves room for a busy machine.
    expect(exit!.ms).toBeLessThan(6_500);
    // The aborted calls were not retried, and the pages after them were never asked for.
    expect(pollCalls(up).length).toBeLessThan(before + 12);
    // Nothing recorded: no event, the baseline's snapshot unchanged, the watch not paused.
    readDb(dbPath, (db) => {
      expect(db.prepare('SELECT count(*) AS n FROM events').get()).toEqual({ n: 0 });
      expect(db.prepare('SELECT device_id, status FROM device_snapshots WHERE key_hash = ? ORDER BY device_id').all(keyHash)).toEqual(baseline);
      // Handed back due at once: another replica, or the next start, polls the key now.
      expect(db.prepare('SELECT paused_reason, leased_until, lease_owner FROM watches WHERE key_hash = ?').get(keyHash)).toEqual({
        paused_reason: null,
        leased_until: 0,
        lease_owner: null,
      });
    });
    const logs = logLines(first);
    const stopAt = logs.findIndex((l) => /shutting down/.test(l.msg));
    expect(
      logs
        .slice(stopAt)
        .filter((l) => l.level >= 40)
        .map((l) => l.msg),
    ).toEqual([]); // no failed poll, no paused watch

    // Restarted (the upstream fast again, the change still there): the key is polled at once and
    // the change recorded, once.
    up.failAlways({ pathPrefix: '/devices', status: 200, body: page });
    const second = await start(dbPath, up, env);
    const events = async () => (await call(second, '/v1/events')).body as Json[];
    await waitFor('the event of the restarted poll', async () => (await events()).length > 0, 15_000);
    expect((await events()).map((e) => [e.type, e.device.id.toLowerCase()])).toEqual([[type, id]]);
    expect(await second.terminate(8_000)).toMatchObject({ code: 0, signal: null });
  },
  60_000,
);

test.concurrent(
  'SIGTERM while a request waits on an upstream that never answers: the request gets the grace period, then the process exits 0 within the budget',
  async () => {
    const dbPath = join(mkdtempSync(join(tmp, 'request-')), 'connector.db');
    const up = await upstream();
    const server = await start(dbPath, up, { UPSTREAM_TIMEOUT_MS: '120000' });
    expect((await call(server, '/v1/triggers/device-status')).status).toBe(200);

    // The upstream stops answering: the next background poll hangs, and so does a request.
    up.failAlways({ hang: true });
    const before = pollCalls(up).length;
    await waitFor('a background poll waiting on the upstream', () => pollCalls(up).length > before, 10_000);
    const calls = up.calls.length;
    const stuck = call(server, '/v1/menus').then(
      (res) => `answered ${res.status}`,
      (err: NodeJS.ErrnoException) => err.code ?? err.message,
    );
    await waitFor('the request to reach the upstream', () => up.calls.slice(calls).some((c) => !c.requestId?.startsWith('poll-')), 10_000);

    const exit = await server.terminate(budgetMs + 5_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit!.ms).toBeGreaterThanOrEqual(graceMs - 500);
    expect(exit!.ms).toBeLessThan(budgetMs);
    expect(await stuck).toBe('ECONNRESET');
    const warnings = logLines(server)
      .filter((l) => l.level >= 40)
      .map((l) => [l.msg, l.requests]);
    expect(warnings).toEqual([['in-flight requests did not finish in time; closing connections', 1]]);
  },
  60_000,
);

test.concurrent(
  "SIGTERM during a request's own baseline: the request has the grace period, then its poll stops and hands the key back, exit 0",
  async () => {
    const dbPath = join(mkdtempSync(join(tmp, 'baseline-')), 'connector.db');
    const up = await upstream();
    const server = await start(dbPath, up, { UPSTREAM_TIMEOUT_MS: '5000' });
    // 100 pages of 1,000 devices, each answered after 500 ms: the baseline would take ~13 s.
    const { page } = await flippedPage(up);
    up.failAlways({ pathPrefix: '/devices', status: 200, body: { ...page, total: 100_000 }, delayMs: 500 });
    const enrolling = call(server, '/v1/triggers/device-status').then(
      (res) => `answered ${res.status}`,
      (err: NodeJS.ErrnoException) => err.code ?? err.message,
    );
    await waitFor('the baseline under way', () => up.callsTo('/devices').filter((c) => c.query.page_size === '1000').length >= 3, 10_000);

    const exit = await server.terminate(budgetMs + 5_000);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(exit!.ms).toBeGreaterThanOrEqual(graceMs - 500);
    expect(exit!.ms).toBeLessThan(budgetMs);
    expect(await enrolling).toBe('ECONNRESET');
    // Its poll stopped at the end of the grace period, before the database closed: the key is
    // not baselined and is free for the next start or another replica at once.
    readDb(dbPath, (db) => {
      expect(db.prepare('SELECT baseline_at, leased_until, lease_owner FROM watches WHERE key_hash = ?').get(hashKey(keys.ana))).toEqual({
        baseline_at: null,
        leased_until: 0,
        lease_owner: null,
      });
    });
    const warnings = logLines(server)
      .filter((l) => l.level >= 40)
      .map((l) => l.msg);
    expect(warnings).toEqual(['in-flight requests did not finish in time; closing connections']);
  },
  60_000,
);

test.concurrent(
  'SIGTERM while a delivery waits on a receiver that never answers: the process exits at the budget with one warn line, the delivery stays leased',
  async () => {
    const dbPath = join(mkdtempSync(join(tmp, 'delivery-')), 'connector.db');
    const up = await upstream();
    // A webhook receiver that takes every delivery and never answers.
    const received: string[] = [];
    const receiver = createServer((req) => received.push(req.headers['webhook-id'] as string)).listen(0, '127.0.0.1');
    receivers.push(receiver);
    await new Promise((resolve) => receiver.once('listening', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const server = await start(dbPath, up, { UPSTREAM_TIMEOUT_MS: '2000', WEBHOOK_TIMEOUT_MS: '120000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
    expect((await call(server, '/v1/hooks', { method: 'POST', body: { target_url: receiverUrl } })).status).toBe(201);

    const { page } = await flippedPage(up);
    up.failAlways({ pathPrefix: '/devices', status: 200, body: page });
    await waitFor('the delivery to reach the receiver', () => received.length > 0, 10_000);

    const exit = await server.terminate(budgetMs + 5_000);
    expect(exit).toMatchObject({ code: 1, signal: null });
    expect(exit!.ms).toBeGreaterThanOrEqual(budgetMs - 1_500);
    expect(exit!.ms).toBeLessThan(budgetMs + 1_000);
    const spent = logLines(server).filter((l) => /shutdown budget spent/.test(l.msg));
    expect(spent).toEqual([expect.objectContaining({ level: 40, budgetMs, requests: 0, background: ['deliverer'], closingDatabase: false })]);
    expect(received).toHaveLength(1);
    // Unfinished: no attempt recorded and still leased, so it is sent again (same webhook-id) when the lease runs out.
    readDb(dbPath, (db) => {
      expect(db.prepare('SELECT count(*) AS n FROM delivery_attempts').get()).toEqual({ n: 0 });
      const delivery = db.prepare('SELECT status, attempts, leased_until FROM deliveries').all() as Json[];
      expect(delivery).toEqual([{ status: 'pending', attempts: 0, leased_until: expect.any(Number) }]);
      expect(delivery[0].leased_until).toBeGreaterThan(Date.now());
    });
  },
  60_000,
);

import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Webhook } from 'standardwebhooks';
import { projectRoot } from '../../src/paths.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { ensureBuild } from '../helpers/processes.js';
import { freshRequest, type FreshRequest } from '../helpers/fresh-request.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * The real process (`node dist/src/main.js`) against a database file in a temp dir
 * (docs/webhooks.md: "a restart or crash loses no pending or retrying delivery, and a
 * delivered event is not sent again"), and graceful shutdown on SIGTERM. Real time: fast
 * poll/heartbeat/retry settings, every wait bounded by a deadline.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const mainJs = join(projectRoot, 'dist', 'src', 'main.js');
const key = 'sk_test_durable_all_scopes_0000001';
const deviceId = 'a4:83:e7:d0:00:01';

let tmp: string;
const children = new Set<ChildProcess>();
const receivers: Receiver[] = [];
const upstreams: FakeUpstream[] = [];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` every 50 ms until it returns true; fails naming `what` after `ms`. */
async function until(what: string, check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(50);
  }
}

interface Server {
  child: ChildProcess;
  port: number;
  base: string;
  /** Parsed JSON log lines from stdout. */
  logs: Json[];
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** A clean environment: nothing from the test runner's own env leaks into the child's config. */
function serverEnv(dbPath: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    DATABASE_PATH: dbPath,
    PORT: '0',
    HOST: '127.0.0.1',
    CONNECTOR_SECRET: 'c0'.repeat(32),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    POLL_INTERVAL_MS: '200',
    HEARTBEAT_TIMEOUT_MS: '1000',
    WEBHOOK_RETRY_SCHEDULE_MS: '300,300,300,300,300',
    LOG_LEVEL: 'info',
    ...extra,
  };
}

/** Starts `node dist/src/main.js`; resolves with the port from its `listening` log line. */
function startServer(env: NodeJS.ProcessEnv): Promise<Server> {
  const child = spawn(process.execPath, [mainJs], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  const logs: Json[] = [];
  let stderr = '';
  let pending = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal });
    });
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not log "listening" within 10 s:\n${stderr}`)), 10_000);
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout!.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) {
        let entry: Json;
        try {
          entry = JSON.parse(line);
        } catch {
          continue; // the demo banner, if any
        }
        logs.push(entry);
        if (entry.msg === 'listening') {
          clearTimeout(timer);
          const port = entry.port as number;
          resolve({ child, port, base: `http://127.0.0.1:${port}`, logs, stderr: () => stderr, exited });
        }
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code ?? signal}) before listening:\n${stderr}`));
    });
  });
}

/** `npm run import` of `file` into the database at `dbPath` (the server may be running). */
async function importDataset(dbPath: string, file: string): Promise<void> {
  const child = spawn(process.execPath, [join(projectRoot, 'dist', 'src', 'cli', 'import.js'), file], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DATABASE_PATH: dbPath },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`import failed (${code}):\n${output}`);
}

/** One request to the process at `base` on a fresh connection. */
function call(base: string, path: string, options: FreshRequest = {}) {
  return freshRequest(`${base}${path}`, options);
}

function writeDataset(dir: string, lastHeartbeat = 'now'): string {
  const file = join(dir, `dataset-${lastHeartbeat}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      accounts: [{ id: 'acc_durable', name: 'Durable Diner' }],
      users: [{ id: 'usr_durable', account_id: 'acc_durable', name: 'Dee' }],
      api_keys: [{ id: 'key_durable', user_id: 'usr_durable', name: 'All', key, scopes: ['device:read', 'menu:read', 'hooks:write'] }],
      devices: [
        {
          id: deviceId.toUpperCase(),
          name: 'Lobby screen',
          timezone: 'America/Chicago',
          screen_resolution: '1920x1080',
          screen_orientation: 'normal',
          registered_at: '2025-01-10T09:00:00.123456Z',
          published_at: 'now-1h',
          last_heartbeat_at: lastHeartbeat,
          offline_startup: false,
          offline_startup_delay_minutes: 0,
          open_dev_tools: false,
          display_connected: true,
          connection_type: 'ethernet',
          wifi_ssid: null,
          wifi_signal_strength: null,
          updated_at: 'now',
          created_at: '2025-01-10T09:00:00.123456Z',
          access: [{ user_id: 'usr_durable', level: 'update' }],
        },
      ],
      menus: [],
    }),
  );
  return file;
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-durability-'));
  await ensureBuild();
}, 180_000);

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  for (const receiver of receivers) await receiver.stop();
  for (const upstream of upstreams) await upstream.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('a delivery that was failing when the process was killed is delivered after restart, with the same webhook-id, once', async () => {
  const dir = mkdtempSync(join(tmp, 'crash-'));
  const dbPath = join(dir, 'connector.db');
  const receiver = await new Receiver().start();
  receivers.push(receiver);
  // Two failures: the first retried on the 300 ms schedule, the second asks for 1 s
  // (Retry-After, longer than the schedule, wins), which leaves a wide window to crash
  // between attempts rather than during one. Every later answer is the default 204.
  receiver.respondWith({ status: 503 }, { status: 503, headers: { 'retry-after': '1' } });

  // Online for a minute, so the hook's baseline surely sees it online however slow the start.
  const first = await startServer(serverEnv(dbPath, { DATASET: writeDataset(dir), HEARTBEAT_TIMEOUT_MS: '60000' }));
  const auth = { 'X-API-Key': key };
  const created = await call(first.base, '/v1/hooks', { method: 'POST', headers: auth, body: { target_url: receiver.url } });
  expect(created.status).toBe(201);
  const hook = created.body as { id: string; secret: string };

  // Then its last heartbeat becomes an hour old (an import while the server runs): the next
  // poll sees it offline, and the delivery fails twice. Order, not timing: the baseline came first.
  await importDataset(dbPath, writeDataset(dir, 'now-1h'));
  // Every attempt of the hook's one delivery, newest first (the delivery's detail).
  const attemptsAt = async (base: string) => {
    const [delivery] = (await call(base, `/v1/hooks/${hook.id}/deliveries`, { headers: auth })).body as Json[];
    if (!delivery) return [];
    const detail = (await call(base, `/v1/hooks/${hook.id}/deliveries/${delivery.delivery_id}`, { headers: auth })).body as Json;
    return (detail.attempts as Json[]).map((a) => ({ ...a, webhook_id: delivery.webhook_id })).reverse();
  };
  const attempts = () => attemptsAt(first.base);
  await until('two recorded failed attempts', async () => (await attempts()).length >= 2);
  const failed = await attempts();
  expect(failed.map((a) => [a.attempt, a.status_code, a.outcome])).toEqual([
    [2, 503, 'retrying'],
    [1, 503, 'retrying'],
  ]);
  first.child.kill('SIGKILL');
  expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });

  expect(receiver.received).toHaveLength(2);
  const webhookId = receiver.received[0]!.headers['webhook-id']!;
  expect(webhookId).toBe(failed[0].webhook_id);
  expect(receiver.received[1]!.headers['webhook-id']).toBe(webhookId);
  const failedPayload = new Webhook(hook.secret).verify(receiver.received[0]!.body, receiver.received[0]!.headers) as Json;
  expect(failedPayload).toMatchObject({ type: 'device.offline', data: { device: { id: deviceId } } });

  // Restart on the same database WITHOUT DATASET: a dataset is re-imported at every start,
  // and its relative `now` heartbeat would bring the device back online (a real, new
  // transition with new events), which is not what a crash does to the world.
  const second = await startServer(serverEnv(dbPath));
  await until('the retried delivery', () => receiver.received.length >= 3);
  const retried = receiver.received[2]!;
  expect(retried.headers['webhook-id']).toBe(webhookId);
  const payload = new Webhook(hook.secret).verify(retried.body, retried.headers) as Json;
  expect(payload).toEqual(failedPayload);

  await until('the delivery recorded as delivered', async () => {
    const latest = await attemptsAt(second.base);
    return latest[0]?.outcome === 'delivered';
  });
  const log = await attemptsAt(second.base);
  expect(log.map((a) => [a.attempt, a.status_code, a.outcome, a.webhook_id])).toEqual([
    [3, 204, 'delivered', webhookId],
    [2, 503, 'retrying', webhookId],
    [1, 503, 'retrying', webhookId],
  ]);

  // Several poll and retry periods later nothing else has arrived: the delivered event is
  // not sent again and the restart minted no new event.
  await sleep(1500);
  expect(receiver.received).toHaveLength(3);
  const events = await call(second.base, '/v1/events', { headers: auth });
  expect(events.body.map((e: Json) => [e.id, e.type])).toEqual([[payload.data.id, 'device.offline']]);

  second.child.kill('SIGTERM');
  expect(await second.exited).toEqual({ code: 0, signal: null });
}, 60_000);

test('SIGTERM lets an in-flight slow request finish, refuses new connections, then exits 0', async () => {
  const dir = mkdtempSync(join(tmp, 'sigterm-'));
  // The slow part is an upstream that takes 1.5 s to answer the device list.
  const upstream = await new FakeUpstream(catalog()).start();
  upstreams.push(upstream);
  upstream.latencyMs = 1500;
  const server = await startServer(serverEnv(join(dir, 'connector.db'), { DATASET: writeDataset(dir), DEVICE_API_URL: upstream.baseUrl }));

  const slow = call(server.base, '/devices', { headers: { Authorization: `Bearer ${keys.ana}` } });
  await until('the request to reach the upstream', () => upstream.callsTo('/devices').length > 0, 5000);
  const signalledAt = Date.now();
  server.child.kill('SIGTERM');
  await until('the shutdown log line', () => server.logs.some((l) => /shutting down/.test(l.msg)), 5000);
  await expect(call(server.base, '/healthz')).rejects.toMatchObject({ code: 'ECONNREFUSED' });

  const answered = await slow;
  expect(answered.status).toBe(200);
  expect(answered.body.total).toBe(4);
  const exit = await server.exited;
  expect(exit).toEqual({ code: 0, signal: null });
  // Inside the 10 s grace period: it stopped as soon as the request was done, not at the end of
  // the grace (8 s leaves room for a busy machine).
  expect(Date.now() - signalledAt).toBeLessThan(8_000);
  expect(server.logs.some((l) => l.msg === 'stopped')).toBe(true);
}, 30_000);

import express from 'express';
import type { Engine } from '../../src/db/database.js';
import { enrolKey } from '../../src/triggers/device-triggers.js';
import { serveChild, type Handlers } from '../lib/child.js';
import { count, countBy, databaseSize, openConnector, settledHeap } from '../lib/connector.js';
import { benchDeviceId, benchPrincipal, deviceDataset, setHeartbeats } from '../lib/devices.js';
import { makeKeysDue } from '../lib/poll.js';
import { BenchLog, buildStack, closeServer, listenLoopback } from '../lib/stack.js';

/**
 * Child processes of row 3 (poller), one per role:
 * - `upstream`: a device upstream implementing docs/devices.md — the connector's own embedded app
 *   over an in-memory database holding `devices` devices of one key — on 127.0.0.1:0, behind
 *   a middleware that counts every call (GET /devices by page). Logs at `warn` (it is a
 *   stand-in, not the system under test). `setHeartbeats` moves devices' heartbeats.
 * - `connector`: a connector in upstream mode (DEVICE_API_URL = the upstream) on a SQLite file
 *   in a temp folder, logging at `info`, background work not started: the row drives
 *   the poller itself: its loop run until idle (`runUntilIdle`) once the key is due
 *   (`makeKeysDue`). Forked with `--expose-gc` so `heap` is after a full GC.
 */
export type PollerRole = 'upstream' | 'connector';

export interface PollerOptions {
  role: PollerRole;
  engine?: Engine;
  devices?: number;
  upstreamUrl?: string;
  heartbeatTimeoutMs?: number;
}

export interface PollerInfo {
  url?: string;
  importMs?: number;
}

export interface UpstreamCounts {
  total: number;
  deviceLists: number;
  /** `page/page_size` → calls. */
  pages: Record<string, number>;
  statuses: Record<string, number>;
}

export interface PollAnswer {
  ms: number;
  keys: number;
  events: number;
  failed: number;
  /** Highest heapUsed seen (sampled every 2 ms and at the end) while the poll ran. */
  peakHeapUsed: number;
}

async function upstream(options: PollerOptions) {
  const log = new BenchLog('poller-upstream');
  const t0 = performance.now();
  const inner = await buildStack({
    dataset: deviceDataset(options.devices ?? 10_000),
    logger: log.logger('warn'),
    env: { HEARTBEAT_TIMEOUT_MS: String(options.heartbeatTimeoutMs ?? 300_000) },
  });
  const importMs = performance.now() - t0;
  const counts: UpstreamCounts = { total: 0, deviceLists: 0, pages: {}, statuses: {} };
  const app = express();
  app.use((req, res, next) => {
    counts.total += 1;
    if (req.method === 'GET' && req.path === '/devices') {
      counts.deviceLists += 1;
      const page = `${String(req.query.page ?? '1')}/${String(req.query.page_size ?? '100')}`;
      counts.pages[page] = (counts.pages[page] ?? 0) + 1;
    }
    res.on('finish', () => {
      counts.statuses[res.statusCode] = (counts.statuses[res.statusCode] ?? 0) + 1;
    });
    next();
  });
  app.use(inner.app);
  const { server, url } = await listenLoopback(app);
  const handlers: Handlers = {
    counts: () => counts,
    /** Heartbeats of the devices at `indexes` set to `ageMs` before now (past the timeout = offline, 0 = back online). */
    setHeartbeats: (arg) => {
      const { indexes, ageMs } = arg as { indexes: number[]; ageMs: number };
      return setHeartbeats(inner.db, indexes.map(benchDeviceId), (Date.now() - ageMs) * 1000);
    },
  };
  return {
    info: { url, importMs },
    handlers,
    async close() {
      await closeServer(server);
      await inner.services.close();
      await inner.db.close();
      log.close();
    },
  };
}

async function connector(options: PollerOptions) {
  const stack = await openConnector({
    label: 'poller',
    engine: options.engine,
    env: { DEVICE_API_URL: options.upstreamUrl!, HEARTBEAT_TIMEOUT_MS: String(options.heartbeatTimeoutMs ?? 300_000) },
  });
  const { services, db } = stack;
  const principal = benchPrincipal('upstream', 'bench-enrol');
  const handlers: Handlers = {
    heap: () => settledHeap(),
    dbSize: async () => ({
      ...(await databaseSize(db, ['device_snapshots', 'events', 'watches'])),
      snapshotRows: await count(db, 'device_snapshots'),
      eventRows: await count(db, 'events'),
    }),
    /** What the trigger route does before serving the key: ask the upstream about it (1 call). */
    confirm: async () => {
      await services.confirmDeviceKey(principal);
      return true;
    },
    /** The trigger route's enrolment: watch the key and record its baseline (first poll). */
    enrol: async () => {
      const t0 = performance.now();
      await enrolKey(services.watches, services.poller, principal, true);
      return { ms: performance.now() - t0, watch: (await services.watches.get(principal.keyHash))?.baseline_at !== null };
    },
    poll: async (): Promise<PollAnswer> => {
      await makeKeysDue(db);
      let peak = process.memoryUsage().heapUsed;
      const sampler = setInterval(() => {
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }, 2);
      const t0 = performance.now();
      try {
        const result = await services.poller.runUntilIdle();
        const ms = performance.now() - t0;
        peak = Math.max(peak, process.memoryUsage().heapUsed);
        return { ms, ...result, peakHeapUsed: peak };
      } finally {
        clearInterval(sampler);
      }
    },
    eventTypes: async () => countBy(db, 'events', 'type'),
  };
  return { info: {}, handlers, close: () => stack.close() };
}

await serveChild<PollerOptions, PollerInfo>((options) => (options.role === 'upstream' ? upstream(options) : connector(options)));

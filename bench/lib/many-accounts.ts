import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../../src/db/database.js';
import { benchDatabaseUrl } from './bench-database.js';
import { fleetKey, FleetUpstream } from './fleet-upstream.js';
import { analysePolls } from './poll-gaps.js';
import { BenchReceiver } from './receiver.js';
import { progress } from './row.js';
import { ServiceProcess } from './service-process.js';

/**
 * Row 7's many-accounts line: 1,000 accounts (keys) of 100 devices each on a fake upstream
 * (FleetUpstream, in this process), every key with a hook to a local receiver, one replica (the
 * service as `npm start` runs it, upstream mode), POLL_INTERVAL_MS=10000, so the poller needs
 * 100 polls a second. Two measurements:
 *
 * - capacity: the service is stopped once every key is enrolled, and started again when all
 *   1,000 are due: the rate at which it polls them all once (first poll to the 1,000th) is what
 *   it can do, compared with the 100 a second the interval needs;
 * - the worst gap: then, with one other process spinning on the cores (other work sharing the
 *   machine), 10 devices of every account go offline, and come back an interval later (a mass
 *   outage: 20,000 events, 20,000 deliveries); the longest time between two polls of one key over
 *   that window, against 1.5 intervals; every delivery made once.
 */
export const many = { keys: 1000, devicesPerKey: 100, intervalMs: 10_000, outageDevices: 10, windowIntervals: 4 };

export interface ManyAccountsMeasured {
  engine: Engine;
  enrolMs: number;
  /** Polls a second when every key was due at once. */
  capacity: number;
  /** The service's CPU time per poll while it polled them (user + system, all its threads). */
  cpuPerPollMs: number;
  /** Polls a second the interval needs. */
  needed: number;
  worstGapMs: number;
  /** Gaps over 1.5 intervals in the window, and all gaps. */
  lateGaps: number;
  gaps: number;
  /** Polls a second over the outage window (the steady rate: at most what is needed when there is headroom). */
  windowRate: number;
  /** The service's CPU time over the outage window (its polls, their records and the deliveries), and a share of one core. */
  windowCpuMs: number;
  windowCpuShare: number;
  expectedDeliveries: number;
  delivered: number;
  duplicates: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function enrolAll(url: string, target: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < many.keys; k = next++) {
      const res = await fetch(`${url}/v1/hooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fleetKey(k)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ target_url: target }),
      });
      await res.arrayBuffer();
      if (res.status !== 201 && res.status !== 200) throw new Error(`subscribing key ${k}: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

/** Another tenant's work on the same cores: a process spinning until stopped. */
function spinner(): ChildProcess {
  return spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
}

export async function runManyAccounts(engine: Engine, scratch: string): Promise<ManyAccountsMeasured> {
  const fleet = await new FleetUpstream(many.keys, many.devicesPerKey).start();
  const receiver = await new BenchReceiver().start();
  const database = await benchDatabaseUrl(engine, 'many_accounts');
  const dir = join(scratch, `many-${engine}`);
  mkdirSync(dir, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LOG_LEVEL: 'info', // as npm start: every status change is a line
    DEVICE_API_URL: fleet.url,
    DATABASE_PATH: join(dir, 'connector.db'),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    CONNECTOR_SECRET: '5'.repeat(64),
    POLL_INTERVAL_MS: String(many.intervalMs),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  };
  let service: ServiceProcess | null = null;
  let spin: ChildProcess | null = null;
  try {
    service = new ServiceProcess(env, dir);
    await service.waitHealthy(60_000);
    progress(`many accounts [${engine}]: subscribing a hook for each of ${many.keys} keys`);
    const t0 = performance.now();
    await enrolAll(service.url, receiver.url);
    const enrolMs = performance.now() - t0;

    // Capacity: stopped, then started when every key is due.
    await service.stop();
    await sleep(many.intervalMs + 500);
    fleet.clearPolls();
    progress(`many accounts [${engine}]: restarted with every key due; measuring how fast it polls them all`);
    service = new ServiceProcess(env, dir);
    await service.waitHealthy(60_000);
    const drainDeadline = Date.now() + 6 * many.intervalMs;
    while (fleet.polls.every((t) => t.length === 0) && Date.now() < drainDeadline) await sleep(20);
    const cpuFrom = service.cpuMs();
    while (fleet.polls.some((t) => t.length === 0) && Date.now() < drainDeadline) await sleep(20);
    const cpuPerPollMs = (service.cpuMs() - cpuFrom) / (many.keys - 1);
    const firsts = fleet.polls.map((t) => t[0] ?? Infinity).sort((a, b) => a - b);
    const capacity = firsts.every(Number.isFinite) ? (many.keys - 1) / ((firsts[many.keys - 1]! - firsts[0]!) / 1000) : NaN;

    // The worst gap through a mass outage, with the cores shared.
    await sleep(many.intervalMs);
    spin = spinner();
    progress(
      `many accounts [${engine}]: mass outage (${many.outageDevices} devices of every account offline, back an interval later), another process spinning`,
    );
    const from = Date.now();
    const windowCpuFrom = service.cpuMs();
    const flipAll = () => {
      for (let k = 0; k < many.keys; k += 1) for (let d = 0; d < many.outageDevices; d += 1) fleet.flip(k, d);
    };
    flipAll();
    await sleep(many.intervalMs * 1.5);
    const flippedBackAt = Date.now();
    flipAll();
    const to = from + many.windowIntervals * many.intervalMs;
    await sleep(to - Date.now());
    const windowCpuMs = service.cpuMs() - windowCpuFrom;
    spin.kill('SIGKILL');
    spin = null;
    const a = analysePolls(fleet.polls, { from, to }, many.intervalMs);
    // BENCH_MANY_TRACE=<file>: every key's poll times and the outage's window, to see where the gaps fall.
    const trace = process.env.BENCH_MANY_TRACE;
    const traced = (): void => {
      if (trace)
        writeFileSync(
          trace,
          JSON.stringify({ engine, from, to, flips: [from, flippedBackAt], polls: fleet.polls, arrivals: receiver.arrivals.map((x) => x.at) }),
        );
    };
    const expected = fleet.transitions.length;
    const deadline = Date.now() + 180_000;
    while (receiver.arrivals.length < expected && Date.now() < deadline) await sleep(250);
    traced();
    const ids = new Set(receiver.arrivals.map((x) => x.id));
    return {
      engine,
      enrolMs,
      capacity,
      cpuPerPollMs,
      needed: many.keys / (many.intervalMs / 1000),
      worstGapMs: a.gaps[0]?.ms ?? NaN,
      lateGaps: a.gaps.filter((g) => g.ms > 1.5 * many.intervalMs).length,
      gaps: a.gaps.length,
      windowRate: a.polls / ((to - from) / 1000),
      windowCpuMs,
      windowCpuShare: windowCpuMs / (to - from),
      expectedDeliveries: expected,
      delivered: ids.size,
      duplicates: receiver.arrivals.length - ids.size,
    };
  } finally {
    spin?.kill('SIGKILL');
    await service?.stop();
    await receiver.stop();
    await fleet.stop();
    await database.drop();
  }
}

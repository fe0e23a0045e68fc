import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchDatabaseUrl, benchEngines } from './lib/bench-database.js';
import { fleetKey, FleetUpstream } from './lib/fleet-upstream.js';
import { median } from './lib/stats.js';
import { ServiceProcess } from './lib/service-process.js';

/**
 * `node dist/bench/poller-cpu.js [rounds]`: the poller's CPU time per poll of a key of 100
 * upstream devices (row 7's many-accounts line: 1,000 such keys, POLL_INTERVAL_MS=10000), in
 * the service as `npm start` runs it. Each round stops the service, waits until every key is
 * due and starts it again: the polls a second while it catches up, and its CPU time per poll
 * then (cold: compiling included) and over the next interval (warm, nothing changing). CPU time
 * holds still on a shared machine where polls a second do not: 1,000,000 µs ÷ the CPU time per
 * poll is what one core could poll. BENCH_ENGINES picks the engines; BENCH_CHILD_PROF=<dir>
 * writes the service's CPU profiles there (one per round).
 */
const keys = 1000;
const devicesPerKey = 100;
const intervalMs = 10_000;
const rounds = Number(process.argv[2] ?? 3);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function enrolAll(url: string): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (let k = next++; k < keys; k = next++) {
      const res = await fetch(`${url}/v1/hooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fleetKey(k)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ target_url: 'http://127.0.0.1:9/hook' }),
      });
      await res.arrayBuffer();
      if (res.status !== 201 && res.status !== 200) throw new Error(`subscribing key ${k}: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}

const polled = (fleet: FleetUpstream) => fleet.polls.reduce((n, t) => n + t.length, 0);

for (const engine of benchEngines()) {
  const fleet = await new FleetUpstream(keys, devicesPerKey).start();
  const database = await benchDatabaseUrl(engine, 'poller_cpu');
  const dir = mkdtempSync(join(tmpdir(), 'poller-cpu-'));
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LOG_LEVEL: 'info',
    DEVICE_API_URL: fleet.url,
    DATABASE_PATH: join(dir, 'connector.db'),
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    CONNECTOR_SECRET: '5'.repeat(64),
    POLL_INTERVAL_MS: String(intervalMs),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  };
  let service: ServiceProcess | null = null;
  try {
    service = new ServiceProcess(env, dir);
    await service.waitHealthy(60_000);
    await enrolAll(service.url);
    const rates: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    for (let round = 0; round < rounds; round += 1) {
      await service.stop();
      await sleep(intervalMs + 500);
      fleet.clearPolls();
      service = new ServiceProcess(env, dir);
      await service.waitHealthy(60_000);
      const deadline = Date.now() + 6 * intervalMs;
      while (fleet.polls.every((t) => t.length === 0) && Date.now() < deadline) await sleep(20);
      const cpuFrom = service.cpuMs();
      while (fleet.polls.some((t) => t.length === 0) && Date.now() < deadline) await sleep(20);
      cold.push(((service.cpuMs() - cpuFrom) * 1000) / (keys - 1));
      const firsts = fleet.polls.map((t) => t[0] ?? Infinity).sort((a, b) => a - b);
      rates.push((keys - 1) / ((firsts[keys - 1]! - firsts[0]!) / 1000));
      // Warm: the next interval's polls, every key polled again, nothing changed.
      const [c0, p0] = [service.cpuMs(), polled(fleet)];
      await sleep(intervalMs);
      warm.push(((service.cpuMs() - c0) * 1000) / Math.max(1, polled(fleet) - p0));
      console.log(
        `${engine} round ${round + 1}: ${rates.at(-1)!.toFixed(0)} polls/s catching up, CPU ${cold.at(-1)!.toFixed(0)} µs/poll then, ${warm.at(-1)!.toFixed(0)} µs/poll warm`,
      );
    }
    const m = (xs: number[]) => median(xs).toFixed(0);
    console.log(
      `${engine}: median ${m(rates)} polls/s catching up (needed ${keys / (intervalMs / 1000)}), CPU ${m(cold)} µs/poll catching up, ${m(warm)} µs/poll warm → one core ≈ ${(1e6 / median(warm)).toFixed(0)} polls/s`,
    );
  } finally {
    await service?.stop();
    await fleet.stop();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

import { startChild } from './lib/child.js';
import { BenchReceiver } from './lib/receiver.js';
import { benchEngines } from './lib/bench-database.js';
import { median } from './lib/stats.js';
import type { PollDone, WebhooksOptions } from './servers/webhooks.js';

/**
 * `node dist/bench/deliverer-cpu.js [rounds]`: the connector's CPU time per webhook delivery,
 * beside the bare loop's (bench row 4's ceiling), in the same child process as row 4. CPU time
 * holds still on a shared machine where deliveries per second do not, so it shows what a
 * change to the deliverer costs or saves. BENCH_ENGINES picks the engines; BENCH_CHILD_PROF=<dir>
 * writes the child's CPU profile there (then `rounds` of bursts only, no ceiling). On PostgreSQL
 * running on this machine it also shows the CPU time the server's processes for the connector's
 * connections spent per delivery (read from /proc), which shares the cores with the connector.
 * BENCH_CHILD_IMPORT=<module> has the child load that module first (`node --import`), for
 * instance one that times every SQLite statement.
 */
const burst = 2000;
const heartbeatTimeoutMs = 300_000;
const rounds = Number(process.argv[2] ?? 5);
const profiling = Boolean(process.env.BENCH_CHILD_PROF);

type Cpu = { cpuMicros: number; wallMs: number };

for (const engine of benchEngines()) {
  const child = await startChild<Record<string, never>>(new URL('./servers/webhooks.js', import.meta.url), {
    engine,
    devices: burst,
    pollIntervalMs: 200,
    heartbeatTimeoutMs,
  } satisfies WebhooksOptions);
  const receivers: BenchReceiver[] = [];
  try {
    await child.call('enrol');
    await child.call('poll');
    const ours: number[] = [];
    const bare: number[] = [];
    const rateOurs: number[] = [];
    const rateBare: number[] = [];
    const pollCpu: number[] = [];
    const dbCpu: number[] = [];
    const indexes = Array.from({ length: burst }, (_, i) => i);
    for (let round = 0; round < rounds; round += 1) {
      const target = await new BenchReceiver().start();
      receivers.push(target);
      const hook = await child.call<{ id: string; secret: string }>('createHook', { url: target.url });
      if (round === 0) await child.call('startDeliverer');
      const a = await child.call<Cpu>('cpu');
      await child.call('setHeartbeats', { indexes, ageMs: round % 2 === 0 ? heartbeatTimeoutMs + 60_000 : 0 });
      await child.call<PollDone>('poll');
      const b = await child.call<Cpu>('cpu');
      const dbB = await child.call<number | null>('dbCpu');
      if (!(await target.waitFor(burst, 300_000))) throw new Error(`round ${round}: ${target.arrivals.length}/${burst} arrived`);
      await new Promise((r) => setTimeout(r, 100)); // the last records
      const c = await child.call<Cpu>('cpu');
      const dbC = await child.call<number | null>('dbCpu');
      if (dbB !== null && dbC !== null) dbCpu.push((dbC - dbB) / burst);
      await child.call('deleteHook', { id: hook.id });
      pollCpu.push(b.cpuMicros - a.cpuMicros);
      ours.push((c.cpuMicros - b.cpuMicros) / burst);
      const ts = target.arrivals.map((x) => x.t);
      rateOurs.push(((burst - 1) * 1000) / (Math.max(...ts) - Math.min(...ts)));
      if (profiling) continue;
      const sink = await new BenchReceiver().start();
      receivers.push(sink);
      const bodies = target.arrivals.map((x) => ({ id: x.id, body: x.body }));
      const d = await child.call<Cpu>('cpu');
      const ceiling = await child.call<{ ms: number }>('ceiling', { url: sink.url, secret: hook.secret, bodies, concurrency: 8 });
      const e = await child.call<Cpu>('cpu');
      bare.push((e.cpuMicros - d.cpuMicros) / burst);
      rateBare.push((burst * 1000) / ceiling.ms);
    }
    const f = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    process.stdout.write(
      `${engine}: connector CPU per delivery ${median(ours).toFixed(0)} µs (${f(ours)})` +
        (dbCpu.length > 0 ? `, database server ${median(dbCpu).toFixed(0)} µs (${f(dbCpu)})` : '') +
        (profiling ? '' : `, bare loop ${median(bare).toFixed(0)} µs (${f(bare)}) → CPU ratio ${(median(bare) / median(ours)).toFixed(2)}`) +
        ` · rate ${median(rateOurs).toFixed(0)}/s (${f(rateOurs)})` +
        (profiling ? '' : `, bare ${median(rateBare).toFixed(0)}/s (${f(rateBare)}) → ${(median(rateOurs) / median(rateBare)).toFixed(2)}×`) +
        ` · enqueueing poll ${(median(pollCpu) / 1000).toFixed(0)} ms CPU\n`,
    );
  } finally {
    await child.stop();
    for (const r of receivers) await r.stop();
  }
}

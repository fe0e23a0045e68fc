import { request } from 'node:http';
import { startChild, type ServerChild } from '../lib/child.js';
import { benchGroupCount, benchKey, benchMenuId, benchRateLimit } from '../lib/dataset.js';
import { runLoad, type LoadResult } from '../lib/load.js';
import { commandFor, progress, type BenchRow, type BenchSettings, type RowOutput } from '../lib/row.js';
import { fmtInt, fmtMs, fmtRatio, median } from '../lib/stats.js';
import { BenchLog } from '../lib/stack.js';
import type { TableRow } from '../lib/table.js';
import type { TargetInfo, TargetOptions, TargetRole } from '../servers/options-targets.js';

/**
 * Benchmark `options-warm`: the warm options endpoint (`/v1/menus/{id}/groups/options`, 200 groups)
 * through the full production stack, beside a bare node:http server and a bare Express route
 * sending the very same body bytes. Each target is its own child process; the load generator
 * runs here. Targets are interleaved (full, Express, node, full, …) and medians reported.
 * Beside them, the full stack with the per-key rate limit off: the limiter's cost (docs/keys.md).
 */

const name = 'options-warm';
const path = `/v1/menus/${benchMenuId}/groups/options`;
const headers = { 'X-API-Key': benchKey };
const initialWarmupMs = 2000;
const slotWarmupMs = 500;
const targetRatio = 0.85;

interface Target {
  role: TargetRole;
  label: string;
  child: ServerChild<TargetInfo>;
  runs: Array<LoadResult & { serverCpu: number; cpuPerRequest: number }>;
  /** Requests answered, warm-ups included (the full stack logs one line for each). */
  served: number;
}

function get(url: string): Promise<{ status: number; body: Buffer; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), headers: res.headers }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${url} timed out`)));
    req.end();
  });
}

async function measure(target: Target, settings: BenchSettings, durationMs: number, expectBytes: number) {
  const before = await target.child.call<{ cpuMicros: number; wallMs: number }>('cpu');
  const result = await runLoad({
    url: `${target.child.info.url}${path}`,
    headers,
    concurrency: settings.concurrency,
    durationMs,
    expectBytes,
    client: settings.client,
  });
  const after = await target.child.call<{ cpuMicros: number; wallMs: number }>('cpu');
  const cpuMicros = after.cpuMicros - before.cpuMicros;
  const serverCpu = cpuMicros / 1000 / (after.wallMs - before.wallMs);
  target.served += result.requests;
  if (result.errors > 0) throw new Error(`${target.label}: ${result.errors} failed requests (first: ${result.firstError})`);
  // CPU time per request is steadier than req/s when other processes share the machine.
  return { ...result, serverCpu, cpuPerRequest: cpuMicros / result.requests };
}

async function run(settings: BenchSettings): Promise<RowOutput> {
  const targets: Target[] = [];
  try {
    const module = new URL('../servers/options-targets.js', import.meta.url);
    progress(`${name}: starting the full stack`);
    const full = await startChild<TargetInfo>(module, { role: 'full' } satisfies TargetOptions);
    targets.push({ role: 'full', label: 'full stack', child: full, runs: [], served: 1 });

    const captured = await get(`${full.info.url}${path}`);
    if (captured.status !== 200) throw new Error(`full stack answered ${captured.status}: ${captured.body.toString()}`);
    if (captured.headers['ratelimit-policy'] !== `"default";q=${benchRateLimit};w=60`) throw new Error('the full stack answered without its rate limit');
    const entries = JSON.parse(captured.body.toString()) as unknown[];
    if (entries.length !== benchGroupCount) throw new Error(`expected ${benchGroupCount} options, got ${entries.length}`);
    const body = captured.body;

    progress(`${name}: starting the bare node:http and Express targets (${body.length} body bytes)`);
    for (const [role, label] of [
      ['bare-express', 'bare Express'],
      ['bare-node', 'bare node:http'],
    ] as const) {
      const child = await startChild<TargetInfo>(module, { role, path, body: body.toString('base64') } satisfies TargetOptions);
      targets.push({ role, label, child, runs: [], served: 1 });
      const check = await get(`${child.info.url}${path}`);
      if (check.status !== 200 || !check.body.equals(body)) throw new Error(`${label} does not send the same bytes`);
    }

    progress(`${name}: starting the full stack with the rate limit off`);
    const off = await startChild<TargetInfo>(module, { role: 'full-limit-off' } satisfies TargetOptions);
    targets.push({ role: 'full-limit-off', label: 'full, limit off', child: off, runs: [], served: 0 });

    progress(`${name}: warming up each target for ${initialWarmupMs} ms`);
    for (const t of targets) await measure(t, settings, initialWarmupMs, body.length);
    for (let round = 1; round <= settings.rounds; round += 1) {
      for (const t of targets) {
        await measure(t, settings, slotWarmupMs, body.length);
        const r = await measure(t, settings, settings.seconds * 1000, body.length);
        t.runs.push(r);
        progress(
          `${name}: round ${round}/${settings.rounds} ${t.label.padEnd(14)} ${fmtInt(r.rps).padStart(7)} req/s  p50 ${fmtMs(r.p50)}  p99 ${fmtMs(r.p99)}  server CPU ${Math.round(r.serverCpu * 100)}% (${Math.round(r.cpuPerRequest)} µs/req)  client CPU ${Math.round(r.clientCpu * 100)}%`,
        );
      }
    }
    const logLines = await full.call<number>('logLines');

    const summary = targets.map((t) => ({
      ...t,
      rps: median(t.runs.map((r) => r.rps)),
      p50: median(t.runs.map((r) => r.p50)),
      p99: median(t.runs.map((r) => r.p99)),
      serverCpu: median(t.runs.map((r) => r.serverCpu)),
      clientCpu: median(t.runs.map((r) => r.clientCpu)),
      cpuPerRequest: median(t.runs.map((r) => r.cpuPerRequest)),
    }));
    const [f, e, n, o] = summary as [(typeof summary)[0], (typeof summary)[0], (typeof summary)[0], (typeof summary)[0]];
    const cmd = `\`${commandFor(name)}\``;
    const figure = (s: typeof f) => `${fmtInt(s.rps)} req/s · p50 ${fmtMs(s.p50)} · p99 ${fmtMs(s.p99)} · ${fmtInt(s.cpuPerRequest)} µs server CPU/req`;
    const ratio = (s: typeof f) =>
      `${fmtRatio(f.rps / s.rps)} × req/s · p99 ${fmtRatio(f.p99 / s.p99)} × · CPU/req ${fmtRatio(f.cpuPerRequest / s.cpuPerRequest)} ×`;
    const vsExpress = f.rps / e.rps;
    const rows: TableRow[] = [
      {
        row: 1,
        benchmark: `warm \`GET /v1/menus/{id}/groups/options\` (${benchGroupCount} groups, ${body.length} B body): **full stack** (request log, auth, validation; ${BenchLog.describe()})`,
        result: figure(f),
        target: '—',
        command: cmd,
      },
      {
        row: 1,
        benchmark: "same bytes, bare Express 5 route (`res.type('json').send(bytes)`, Express defaults)",
        result: figure(e),
        target: '—',
        command: cmd,
      },
      { row: 1, benchmark: 'same bytes, bare `node:http` server', result: figure(n), target: '—', command: cmd },
      {
        row: 1,
        benchmark: 'full stack ÷ bare Express',
        result: ratio(e),
        target: `req/s ≥ ${targetRatio.toFixed(2)} × — ${vsExpress >= targetRatio ? '✅ met' : '❌ not met'}`,
        command: cmd,
      },
      { row: 1, benchmark: 'full stack ÷ bare node:http', result: ratio(n), target: '—', command: cmd },
      {
        row: 1,
        benchmark: `the per-key rate limit's cost: full stack (limit on, ${fmtInt(benchRateLimit)} a minute, never reached) ÷ the same with \`RATE_LIMIT_PER_MINUTE=0\` (${figure(o)})`,
        result: ratio(o),
        target: '—',
        command: cmd,
      },
    ];
    const bound = (s: typeof f) => {
      if (s.serverCpu >= 0.9) return '';
      return s.clientCpu >= 0.8
        ? ' Its server used < 90% of a core while the load generator used ≥ 80%: the client was the limit, so this is a lower bound.'
        : ' Its server used < 90% of a core: other processes were competing for the CPU.';
    };
    const notes = [
      `${name}: medians of ${settings.rounds} interleaved rounds × ${settings.seconds} s per target (after ${initialWarmupMs} ms warm-up per target and ${slotWarmupMs} ms before each slot), ${settings.concurrency} keep-alive connections, ${settings.client === 'raw' ? 'raw net-socket' : 'node:http keep-alive Agent'} client in the parent process, each server in its own child process. "server CPU/req" = the server process's user+system CPU time (all its threads: GC, libuv pool) over the requests it answered; it moves less than req/s when other processes share the machine.`,
      ...summary.map(
        (s) =>
          `${name}: ${s.label}: req/s per round ${s.runs.map((r) => fmtInt(r.rps)).join(', ')}; p99 ${s.runs.map((r) => r.p99.toFixed(2)).join(', ')} ms; server CPU/req ${s.runs.map((r) => Math.round(r.cpuPerRequest)).join(', ')} µs; median CPU server ${Math.round(s.serverCpu * 100)}% / client ${Math.round(s.clientCpu * 100)}% of a core.${bound(s)}`,
      ),
      `${name}: full/Express req/s per round ${f.runs.map((r, i) => fmtRatio(r.rps / e.runs[i]!.rps)).join(', ')}. The bare Express route keeps Express defaults, so it also computes a weak ETag (SHA-1 over the body) per request; the full stack serves a precomputed strong ETag.`,
      `${name}: the full stack answered ${fmtInt(f.served)} requests (warm-ups included) and wrote ${fmtInt(logLines)} request log lines; its background work (poller, webhook deliverer) was started as in main.ts.`,
    ];
    return { rows, notes };
  } finally {
    await Promise.all(targets.map((t) => t.child.stop()));
  }
}

export const optionsWarm: BenchRow = {
  name,
  contractRow: 1,
  description: 'warm options endpoint: full stack vs bare node:http and bare Express sending the same bytes',
  run,
};

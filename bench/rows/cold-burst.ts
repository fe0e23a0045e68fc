import { Agent, request } from 'node:http';
import { startChild, type ServerChild } from '../lib/child.js';
import { benchKey, extraBenchKey } from '../lib/dataset.js';
import { commandFor, progress, type BenchRow, type RowOutput } from '../lib/row.js';
import { fmtMs } from '../lib/stats.js';
import type { BurstInfo, BurstOptions, UpstreamCalls } from '../servers/cold-burst.js';

/**
 * Benchmark `cold-burst`: 200 concurrent requests for one uncached option list
 * (`/v1/menus/options`) on a connector in upstream mode whose upstream answers after 100 ms.
 * Single-flight should turn them into one upstream call.
 */

const name = 'cold-burst';
const burst = 200;
const upstreamDelayMs = 100;
const requestTimeoutMs = 15_000;
const path = '/v1/menus/options';

interface Answer {
  status: number;
  body: string;
  cache: string;
  /** Milliseconds from the start of the burst to this answer. */
  at: number;
}

function get(url: string, key: string, agent: Agent, started: number): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { 'X-API-Key': key } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString(),
          cache: String(res.headers['x-cache'] ?? '-'),
          at: performance.now() - started,
        }),
      );
    });
    req.on('error', reject);
    req.setTimeout(requestTimeoutMs, () => req.destroy(new Error('request timed out')));
    req.end();
  });
}

interface BurstResult {
  upstreamCalls: number;
  byPath: Record<string, number>;
  ok: number;
  identical: boolean;
  options: number;
  wallMs: number;
  firstMs: number;
  states: Record<string, number>;
  statuses: Record<string, number>;
}

const tally = <T extends string | number>(values: T[]): Record<string, number> => {
  const out: Record<string, number> = {};
  for (const v of values) out[String(v)] = (out[String(v)] ?? 0) + 1;
  return out;
};

/** `burst` concurrent requests, one new connection each, and the upstream calls they caused. */
async function fireBurst(child: ServerChild<BurstInfo>, key: string): Promise<BurstResult> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  try {
    const before = await child.call<UpstreamCalls>('calls');
    const url = `${child.info.connectorUrl}${path}`;
    const started = performance.now();
    const answers = await Promise.all(
      Array.from({ length: burst }, () =>
        get(url, key, agent, started).catch((err: Error): Answer => ({ status: 0, body: err.message, cache: '-', at: performance.now() - started })),
      ),
    );
    const wallMs = performance.now() - started;
    const after = await child.call<UpstreamCalls>('calls');
    const byPath: Record<string, number> = {};
    for (const [p, n] of Object.entries(after.byPath)) if (n - (before.byPath[p] ?? 0) > 0) byPath[p] = n - (before.byPath[p] ?? 0);
    const ok = answers.filter((a) => a.status === 200).length;
    const firstOk = answers.find((a) => a.status === 200);
    return {
      upstreamCalls: after.total - before.total,
      byPath,
      ok,
      identical: answers.every((a) => a.body === answers[0]!.body),
      options: firstOk ? (JSON.parse(firstOk.body) as unknown[]).length : 0,
      wallMs,
      firstMs: Math.min(...answers.map((a) => a.at)),
      states: tally(answers.map((a) => a.cache)),
      statuses: tally(answers.map((a) => a.status)),
    };
  } finally {
    agent.destroy();
  }
}

const met = (r: BurstResult) => r.upstreamCalls === 1 && r.ok === burst && r.identical;
const figure = (r: BurstResult) =>
  `**${r.upstreamCalls} upstream call${r.upstreamCalls === 1 ? '' : 's'}** · ${r.ok}/${burst} got 200${r.identical ? ', identical bodies' : ', bodies DIFFER'} · burst wall time ${fmtMs(r.wallMs)}`;
const describe = (label: string, r: BurstResult) =>
  `${name}: ${label}: upstream calls by path ${JSON.stringify(r.byPath)}; statuses ${JSON.stringify(r.statuses)}; X-Cache ${JSON.stringify(r.states)}${
    r.states.MISS === burst ? ' (every request joined the one in-flight load)' : ''
  }; first answer after ${fmtMs(r.firstMs)}, last after ${fmtMs(r.wallMs)}; ${r.options} option(s) in the body.`;

async function run(): Promise<RowOutput> {
  progress(`${name}: starting a fake upstream (+${upstreamDelayMs} ms) and a connector in upstream mode`);
  const child = await startChild<BurstInfo>(new URL('../servers/cold-burst.js', import.meta.url), { delayMs: upstreamDelayMs } satisfies BurstOptions);
  try {
    progress(`${name}: firing ${burst} concurrent requests for ${path} at the freshly started connector`);
    const fresh = await fireBurst(child, benchKey);
    // The same again for a second key (its own, equally uncached list) once the process is
    // warm: the first burst's wall time also pays for JIT warm-up and the first fetch().
    progress(`${name}: again with a second key, now that the process is warm`);
    const warm = await fireBurst(child, extraBenchKey(1));
    const cmd = `\`${commandFor(name)}\``;
    return {
      rows: [
        {
          row: 2,
          benchmark: `cold burst: ${burst} concurrent \`GET ${path}\` (uncached, connector in upstream mode, freshly started), upstream answers after ${upstreamDelayMs} ms`,
          result: figure(fresh),
          target: `1 upstream call — ${met(fresh) ? '✅ met' : '❌ not met'}`,
          command: cmd,
        },
        {
          row: 2,
          benchmark: 'same burst for a second key (its own uncached list) once the process is warm',
          result: figure(warm),
          target: `1 upstream call — ${met(warm) ? '✅ met' : '❌ not met'}`,
          command: cmd,
        },
      ],
      notes: [
        describe('fresh process', fresh),
        describe('warm process, second key', warm),
        `${name}: one new connection per request; the upstream is the embedded app over the generated dataset behind a middleware that counts calls and delays each by ${upstreamDelayMs} ms; background work not started, so every call counted came from the burst.`,
      ],
    };
  } finally {
    await child.stop();
  }
}

export const coldBurst: BenchRow = {
  name,
  contractRow: 2,
  description: 'cold burst: 200 concurrent requests for one uncached option list → upstream calls',
  run,
};

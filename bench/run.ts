import { cpus } from 'node:os';
import { progress, type BenchRow, type BenchSettings } from './lib/row.js';
import { markdownTable, type TableRow } from './lib/table.js';
import { optionsWarm } from './rows/options-warm.js';
import { coldBurst } from './rows/cold-burst.js';
import { poller } from './rows/poller.js';
import { webhooks } from './rows/webhooks.js';
import { replicas } from './rows/replicas.js';

/**
 * `npm run bench [-- <row> ...]`: runs the benchmark rows (all, or those named) one after
 * the other and prints one markdown table to stdout; progress goes to stderr.
 *
 * A new row is a module under bench/rows/ exporting a BenchRow, added to `rows` below.
 *
 * Environment: BENCH_SECONDS (measured seconds per target per round, default 2),
 * BENCH_ROUNDS (interleaved rounds, default 5), BENCH_CONCURRENCY (connections, default 32),
 * BENCH_CLIENT (`raw` net sockets, default, or `http` for a node:http keep-alive Agent).
 */
const rows: BenchRow[] = [optionsWarm, coldBurst, poller, webhooks, replicas];

function readSettings(env: NodeJS.ProcessEnv): BenchSettings {
  const num = (name: string, fallback: number, min: number, max: number, integer: boolean): number => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    const n = Number(text);
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new Error(`${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max} (got ${JSON.stringify(text)})`);
    }
    return n;
  };
  const client = env.BENCH_CLIENT || 'raw';
  if (client !== 'raw' && client !== 'http') throw new Error(`BENCH_CLIENT must be raw or http (got ${JSON.stringify(client)})`);
  return {
    seconds: num('BENCH_SECONDS', 2, 0.2, 600, false),
    rounds: num('BENCH_ROUNDS', 5, 1, 50, true),
    concurrency: num('BENCH_CONCURRENCY', 32, 1, 1000, true),
    client,
  };
}

function selectRows(args: string[]): BenchRow[] {
  if (args.length === 0) return rows;
  return args.map((arg) => {
    const row = rows.find((r) => r.name === arg || String(r.contractRow) === arg);
    if (!row) throw new Error(`unknown bench row "${arg}"; rows: ${rows.map((r) => r.name).join(', ')}`);
    return row;
  });
}

/** An upper bound on a run, so a stuck row cannot hang the command. */
function budgetMs(settings: BenchSettings, selected: BenchRow[]): number {
  return 120_000 + selected.length * settings.rounds * 3 * (settings.seconds + 2) * 1000 * 2;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  if (args.includes('--help') || args.includes('--list')) {
    process.stdout.write(`npm run bench [-- <row> ...]\n\n${rows.map((r) => `  ${r.name.padEnd(14)} ${r.description}`).join('\n')}\n`);
    return 0;
  }
  const settings = readSettings(process.env);
  const selected = selectRows(args);
  const watchdog = setTimeout(() => {
    progress(`gave up: the run took longer than ${Math.round(budgetMs(settings, selected) / 1000)} s`);
    process.exit(2);
  }, budgetMs(settings, selected));
  watchdog.unref();

  const started = performance.now();
  const table: TableRow[] = [];
  const notes: string[] = [];
  let failed = false;
  for (const row of selected) {
    const t0 = performance.now();
    try {
      const out = await row.run(settings);
      table.push(...out.rows);
      notes.push(...out.notes, `${row.name}: took ${((performance.now() - t0) / 1000).toFixed(1)} s.`);
    } catch (err) {
      failed = true;
      progress(`${row.name} failed: ${(err as Error).stack ?? String(err)}`);
      table.push({ row: row.contractRow, benchmark: row.description, result: `failed: ${(err as Error).message}`, target: '❌', command: `\`npm run bench -- ${row.name}\`` });
    }
  }
  const cpu = cpus();
  const machine = `Node ${process.version}, ${cpu.length} × ${cpu[0]?.model.trim() ?? 'CPU'}, ${process.platform}/${process.arch}`;
  process.stdout.write(`${markdownTable(table)}\n\n`);
  process.stdout.write(`Measured in one run of \`npm run bench${args.length ? ` -- ${args.join(' ')}` : ''}\` on ${machine}; total ${((performance.now() - started) / 1000).toFixed(1)} s. `);
  process.stdout.write(`BENCH_SECONDS=${settings.seconds} BENCH_ROUNDS=${settings.rounds} BENCH_CONCURRENCY=${settings.concurrency} BENCH_CLIENT=${settings.client}.\n\n`);
  for (const note of notes) process.stdout.write(`- ${note}\n`);
  return failed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Every row closes what it opened; this only guards against a leaked handle.
    setTimeout(() => {
      progress('forcing exit: a handle was left open');
      process.exit(code);
    }, 3000).unref();
  },
  (err: unknown) => {
    progress((err as Error).message);
    process.exit(1);
  },
);

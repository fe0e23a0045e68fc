import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { progress, type BenchRow, type BenchSettings } from './lib/row.js';
import { benchReport, type ReportLine } from './lib/report.js';
import { optionsWarm } from './rows/options-warm.js';
import { coldBurst } from './rows/cold-burst.js';
import { poller } from './rows/poller.js';
import { webhooks } from './rows/webhooks.js';
import { replicas } from './rows/replicas.js';
import { scaleRow } from './rows/scale.js';

/**
 * `npm run bench [-- <row> ...] [-- --json <file>]`: runs the benchmark rows (all, or those
 * named) one after the other and prints one markdown table to stdout, each figure beside its
 * target and ✔ or ✘; progress goes to stderr. Exits 1 when a row missed its target, printed
 * none, or failed to run. `--json <file>` also writes the figures with the date, the machine
 * (cores, Node.js version) and the commit.
 *
 * A new row is a module under bench/rows/ exporting a BenchRow, added to `rows` below. A row
 * marked `onlyWhenNamed` (`scale`, which takes minutes) is left out unless named.
 *
 * Environment: BENCH_SECONDS (measured seconds per target per round, default 2),
 * BENCH_ROUNDS (interleaved rounds, default 5), BENCH_CONCURRENCY (connections, default 32),
 * BENCH_CLIENT (`raw` net sockets, default, or `http` for a node:http keep-alive Agent).
 */
const rows: BenchRow[] = [optionsWarm, coldBurst, poller, webhooks, replicas, scaleRow];

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
  if (args.length === 0) return rows.filter((r) => !r.onlyWhenNamed);
  return args.map((arg) => {
    const row = rows.find((r) => r.name === arg);
    if (!row) throw new Error(`unknown bench row "${arg}"; rows: ${rows.map((r) => r.name).join(', ')}`);
    return row;
  });
}

/** An upper bound on a run, so a stuck row cannot hang the command. */
function budgetMs(settings: BenchSettings, selected: BenchRow[]): number {
  const own = selected.reduce((ms, row) => ms + (row.budgetMs ?? 0), 0);
  return 120_000 + own + selected.length * settings.rounds * 3 * (settings.seconds + 2) * 1000 * 2;
}

/** `--json <file>` out of the arguments; the rest are row names. */
function parseArgs(argv: string[]): { names: string[]; jsonFile: string | null } {
  const at = argv.indexOf('--json');
  if (at < 0) return { names: argv, jsonFile: null };
  const jsonFile = argv[at + 1];
  if (!jsonFile || jsonFile.startsWith('--')) throw new Error('--json needs a file name: npm run bench -- --json bench.json');
  return { names: [...argv.slice(0, at), ...argv.slice(at + 2)], jsonFile };
}

/** The commit measured, `-dirty` when the work tree has changes; null outside a git checkout. */
function currentCommit(): string | null {
  try {
    const head = execFileSync('git', ['rev-parse', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return dirty ? `${head}-dirty` : head;
  } catch {
    return null;
  }
}

function help(): string {
  const names = rows.map((r) => `  ${r.name.padEnd(14)} ${r.description}`).join('\n');
  const named = rows
    .filter((r) => r.onlyWhenNamed)
    .map((r) => r.name)
    .join(', ');
  return `npm run bench [-- <row> ...] [--json <file>]\n\nRows:\n${names}\n\nWithout row names every row runs except ${named} (slow: name it, e.g. npm run bench -- ${named.split(', ')[0]}).\nEach figure is printed beside its target with ✔ (met) or ✘ (missed); a miss exits 1.\n--json <file> also writes the figures with the date, the machine and the commit.\n`;
}

async function main(): Promise<number> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('--list')) {
    process.stdout.write(help());
    return 0;
  }
  const { names, jsonFile } = parseArgs(argv);
  const settings = readSettings(process.env);
  const selected = selectRows(names);
  const watchdog = setTimeout(
    () => {
      progress(`gave up: the run took longer than ${Math.round(budgetMs(settings, selected) / 1000)} s`);
      process.exit(2);
    },
    budgetMs(settings, selected),
  );
  watchdog.unref();

  const started = performance.now();
  const lines: ReportLine[] = [];
  const rowNotes: string[] = [];
  const erroredRows: string[] = [];
  for (const row of selected) {
    const t0 = performance.now();
    try {
      const out = await row.run(settings);
      lines.push(...out.rows.map(({ benchmark, result, target, command }) => ({ name: row.name, benchmark, result, target, command })));
      rowNotes.push(...out.notes, `${row.name}: took ${((performance.now() - t0) / 1000).toFixed(1)} s.`);
    } catch (err) {
      erroredRows.push(row.name);
      progress(`${row.name} failed: ${(err as Error).stack ?? String(err)}`);
      lines.push({
        name: row.name,
        benchmark: row.description,
        result: `failed: ${(err as Error).message}`,
        target: '❌ did not run to the end',
        command: `\`npm run bench -- ${row.name}\``,
      });
    }
  }
  const report = benchReport(lines, { erroredRows });
  const cpu = cpus();
  const machine = { cores: cpu.length, cpu: cpu[0]?.model.trim() ?? 'unknown', node: process.version, platform: `${process.platform}/${process.arch}` };
  const date = new Date().toISOString();
  const commit = currentCommit();
  const command = `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`;
  process.stdout.write(`${report.table}\n\n`);
  process.stdout.write(`${report.passed ? '✔ every target met' : `✘ missed: ${report.missed.join(', ')}`}.\n\n`);
  process.stdout.write(
    `Measured in one run of \`${command}\` on ${date.slice(0, 10)}, commit ${commit ?? 'unknown'}: Node ${process.version}, ${machine.cores} × ${machine.cpu}, ${machine.platform}; total ${((performance.now() - started) / 1000).toFixed(1)} s.\n`,
  );
  process.stdout.write(
    `BENCH_SECONDS=${settings.seconds} BENCH_ROUNDS=${settings.rounds} BENCH_CONCURRENCY=${settings.concurrency} BENCH_CLIENT=${settings.client}.\n\n`,
  );
  for (const note of [...report.notes, ...rowNotes]) process.stdout.write(`- ${note}\n`);
  if (jsonFile) {
    const figures = { date, machine, commit, command, settings, passed: report.passed, missed: report.missed, lines: report.json, notes: rowNotes };
    writeFileSync(jsonFile, `${JSON.stringify(figures, null, 2)}\n`);
    progress(`figures written to ${jsonFile}`);
  }
  return report.passed ? 0 : 1;
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

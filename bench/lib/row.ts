import type { TableRow } from './table.js';

/** Shared run settings, read once from the environment by bench/run.ts. */
export interface BenchSettings {
  /** Measured seconds per target per round (BENCH_SECONDS). */
  seconds: number;
  /** Interleaved rounds (BENCH_ROUNDS). */
  rounds: number;
  /** Connections kept busy by the load generator (BENCH_CONCURRENCY). */
  concurrency: number;
  /** Load generator client (BENCH_CLIENT): `http` (node:http keep-alive agent) or `raw` (net sockets). */
  client: 'http' | 'raw';
}

export interface RowOutput {
  /** Lines of the one table. */
  rows: TableRow[];
  /** Extra lines printed under the table (settings, raw per-round figures). */
  notes: string[];
}

/**
 * One benchmark row: a module under bench/rows/ registered in bench/run.ts. `run` must be
 * bounded in time, listen on loopback only, and leave no server or child process behind.
 */
export interface BenchRow {
  /** The argument that selects it: `npm run bench -- <name>`. */
  name: string;
  /** Its number in the README's benchmark table. */
  contractRow: number;
  description: string;
  /** Left out of a plain `npm run bench` (a slow row): runs only when named. */
  onlyWhenNamed?: boolean;
  /** Its own time budget in ms, added to the run's (see bench/run.ts). */
  budgetMs?: number;
  run(settings: BenchSettings): Promise<RowOutput>;
}

export function commandFor(name: string): string {
  return `npm run bench -- ${name}`;
}

/** Progress goes to stderr so stdout carries only the table. */
export function progress(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

import { setImmediate } from 'node:timers/promises';

import type { Engine } from './engine.js';

/**
 * How long one slice of a bulk delete should take. SQLite: well under the event loop's 50 ms
 * budget, since every statement runs on it. PostgreSQL: the event loop is free while a
 * statement runs; a slice there is how long its row locks are held, and each slice costs a few
 * round trips, so slices are longer (200 ms: a fraction of any lock or statement timeout).
 */
const targetSliceMs: Record<Engine, number> = { sqlite: 20, postgres: 200 };
const minRows = 50;
const maxRows = 5_000;
const firstRows = 500;

/**
 * Runs a bulk change as slices, each its own short statement or transaction, until `slice`
 * reports it has no more to do (or `signal` is aborted: a shutdown; the rest is left for the
 * next run). Other work gets a turn of the event loop between slices: on SQLite every
 * statement runs on the event loop, so a slice is as long a stall as there is; on PostgreSQL
 * a slice is as long as its locks are held.
 *
 * The number of rows asked of each slice follows how long the last one took, aiming at
 * `targetSliceMs` whatever a row costs (an event with ten deliveries and their attempts costs more than
 * one with none). `slice(limit)` returns how many rows it handled and whether there are more.
 * Returns the rows handled in all, and whether it was stopped before the end.
 */
export async function inSlices(
  engine: Engine,
  slice: (limit: number) => Promise<{ rows: number; more: boolean }>,
  signal?: AbortSignal,
): Promise<{ rows: number; stopped: boolean }> {
  let limit = firstRows;
  let rows = 0;
  for (let first = true; ; first = false) {
    if (!first) await setImmediate();
    if (signal?.aborted) return { rows, stopped: true };
    const started = performance.now();
    const done = await slice(limit);
    rows += done.rows;
    if (!done.more) return { rows, stopped: false };
    limit = nextLimit(limit, performance.now() - started, targetSliceMs[engine]);
  }
}

/** Halves the slice when it ran long, grows it by half when it ran short. */
export function nextLimit(limit: number, tookMs: number, targetMs: number): number {
  if (tookMs > 1.5 * targetMs) return Math.max(minRows, Math.floor(limit / 2));
  if (tookMs < targetMs / 2) return Math.min(maxRows, Math.ceil(limit * 1.5));
  return limit;
}

import { setImmediate } from 'node:timers/promises';

/**
 * Rows or ids per statement: well under both engines' limits on bound parameters (SQLite
 * 32,766, PostgreSQL 65,535) even for the widest row the connector writes (17 columns).
 */
export const rowsPerStatement = 500;

/** `items` in consecutive slices of at most `size`. */
export function chunks<T>(items: readonly T[], size = rowsPerStatement): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * Runs a look-up over `items` a slice at a time, one after the other, and joins the results.
 * Other work runs between slices (SQLite answers synchronously: thousands of ids are many
 * statements, not one long block of the event loop).
 */
export async function inChunks<T, R>(items: readonly T[], lookUp: (part: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (const [i, part] of chunks(items).entries()) {
    if (i > 0) await setImmediate();
    for (const row of await lookUp(part)) out.push(row);
  }
  return out;
}

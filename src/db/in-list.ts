import { sql, type RawBuilder } from 'kysely';

/** The lengths a list is padded to: 10 statement texts per statement at most, whatever the batch. */
const sizes = [1, 2, 4, 8, 16, 32, 64, 128, 256, 500];

/**
 * `(?, ?, …)` for `values`, padded to the next of a few lengths by repeating the last value, for
 * `x IN …`, where a repeat changes nothing. A statement's text then takes one of a few forms
 * whatever the batch's size, so the prepared statement is found in the SQLite driver's cache
 * (sqlite-driver.ts `statementCache`) instead of compiled again for each new length. At most
 * `rowsPerStatement` values (chunks.ts); `values` must not be empty.
 */
export function inList(values: readonly unknown[]): RawBuilder<unknown> {
  if (values.length === 0) throw new Error('inList: no values');
  const size = sizes.find((s) => s >= values.length) ?? values.length;
  const padded = values.length === size ? values : [...values, ...Array<unknown>(size - values.length).fill(values[values.length - 1])];
  return sql`(${sql.join(padded)})`;
}

/** The row counts a multi-row insert is cut into: 4 statement texts per insert, whatever the batch. */
const rowSizes = [128, 32, 8, 1];

/**
 * `rows` cut into consecutive groups of 128, 32, 8 or 1 rows, largest first, for an
 * `INSERT … VALUES ${valuesOf(group)}` each: the statement then takes one of four texts (found in
 * the SQLite driver's cache, as with `inList`), and its values are bound parameters, which
 * SQLite reads at about half the cost of the same rows sent as one JSON parameter and taken
 * apart with json_each (docs/benchmarks.md).
 */
export function rowGroups<T>(rows: readonly T[]): T[][] {
  const groups: T[][] = [];
  let i = 0;
  for (const size of rowSizes) for (; rows.length - i >= size; i += size) groups.push(rows.slice(i, i + size));
  return groups;
}

/** `(?, ?, …), (?, ?, …)`: a VALUES list of `rows`, each row's values in column order. */
export function valuesOf(rows: ReadonlyArray<readonly unknown[]>): RawBuilder<unknown> {
  return sql.join(rows.map((row) => sql`(${sql.join(row)})`));
}

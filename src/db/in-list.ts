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

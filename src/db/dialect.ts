import { sql, type RawBuilder } from 'kysely';
import type { Engine } from './engine.js';

/**
 * SQL expressions that differ between the engines, for the stores to build statements with: the
 * engines' differences stay in db/ (here, the migrations and the drivers), never in the stores.
 */

/** True where the text in `column` contains `needle` (a plain substring: no pattern characters). */
export function containsText(engine: Engine, column: string, needle: string): RawBuilder<boolean> {
  return engine === 'postgres' ? sql<boolean>`strpos(${sql.ref(column)}, ${needle}) > 0` : sql<boolean>`instr(${sql.ref(column)}, ${needle}) > 0`;
}

/** The largest of `values` (PostgreSQL's GREATEST, SQLite's many-argument max). */
export function greatest<T>(engine: Engine, ...values: RawBuilder<T>[]): RawBuilder<T> {
  return sql<T>`${sql.raw(engine === 'postgres' ? 'GREATEST' : 'max')}(${sql.join(values)})`;
}

/** The smallest of `values` (PostgreSQL's LEAST, SQLite's many-argument min). */
export function least<T>(engine: Engine, ...values: RawBuilder<T>[]): RawBuilder<T> {
  return sql<T>`${sql.raw(engine === 'postgres' ? 'LEAST' : 'min')}(${sql.join(values)})`;
}

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

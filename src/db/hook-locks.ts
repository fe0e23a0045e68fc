import { sql, type Kysely } from 'kysely';
import { byEngine, type Engine } from './engine.js';
import type { Tables } from './tables.js';

/**
 * The hooks `ids` locked `FOR KEY SHARE`, in id order, inside `trx`: the first lock a
 * transaction takes that then locks their deliveries, in the lock order of a hook's delete
 * (its row, then its deliveries by cascade; docs/webhooks.md, "Durability"). A delete of one
 * of them then waits for `trx`, or `trx` for it, instead of each holding what the other needs.
 * `FOR KEY SHARE` blocks only a delete: the deliverer's records and a key's pause go on.
 * SQLite: nothing to take (its one writer runs every transaction alone).
 */
export async function lockHooks(engine: Engine, trx: Kysely<Tables>, ids: Iterable<string>): Promise<void> {
  const sorted = [...new Set(ids)].sort();
  if (sorted.length === 0) return;
  await byEngine(engine, {
    sqlite: async () => undefined,
    postgres: async () => {
      await sql`SELECT id FROM hooks WHERE id = ANY(${sorted}::text[]) ORDER BY id FOR KEY SHARE`.execute(trx);
    },
  });
}

import { sql } from 'kysely';
import type { Db } from '../db/database.js';

/**
 * Events per type per period (an hour `YYYY-MM-DDTHH`, or a day `YYYY-MM-DD`) of `occurred_at`,
 * from `from` (inclusive) to `until` (exclusive), both timestamps in the stored form. Counted by
 * the database with one GROUP BY over the key's events (the `events_key_seq` index narrows it to
 * the key), so a week of a big fleet's transitions is never read into memory. Periods without
 * events are absent.
 */
export async function countEventsByPeriod(
  db: Db,
  keyHash: string,
  filter: { types: string[]; periodLength: 10 | 13; from: string; until: string },
): Promise<Array<{ period: string; type: string; count: number }>> {
  // A literal, not a parameter: PostgreSQL must see the same expression in SELECT and GROUP BY.
  const period = sql<string>`substr(occurred_at, 1, ${sql.lit(filter.periodLength)})`;
  const rows = await db.kysely
    .selectFrom('events')
    .select([period.as('period'), 'type', (eb) => eb.fn.countAll<number | string>().as('count')])
    .where('key_hash', '=', keyHash)
    .where('type', 'in', filter.types)
    .where('occurred_at', '>=', filter.from)
    .where('occurred_at', '<', filter.until)
    .groupBy([period, 'type'])
    .execute();
  return rows.map((r) => ({ period: r.period, type: r.type, count: Number(r.count) }));
}

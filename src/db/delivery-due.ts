import { sql, type RawBuilder } from 'kysely';

/**
 * When a delivery is due next, in SQL: NULL unless it is pending; while it is leased, the
 * lease's end (on PostgreSQL a lease moves only `leased_until`, webhooks/delivery-store.ts),
 * else its next attempt. The queue's gauges, the operator's queue view and the delivery list
 * all read it from here. `alias`: the deliveries table's alias in the query, if any.
 */
export function pendingDueAt(alias?: string): RawBuilder<number | null> {
  const column = (name: string) => sql.ref(alias ? `${alias}.${name}` : name);
  return sql<
    number | null
  >`CASE WHEN ${column('status')} <> 'pending' THEN NULL WHEN ${column('leased_until')} > ${column('next_attempt_at')} THEN ${column('leased_until')} ELSE ${column('next_attempt_at')} END`;
}

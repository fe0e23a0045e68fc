import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { pendingDueAt } from '../db/delivery-due.js';

export interface OriginHealth {
  target_origin: string;
  pending: number;
  waiting: number;
  dead: number;
  oldest_due_age_ms: number;
}

/**
 * The delivery queue per target origin, for the operator (`GET /admin/v1/queue`): what the
 * queue gauges of `/metrics` give in total, split by the origin of each delivery's hook.
 * Read only; leased deliveries count as pending or waiting.
 */
export async function originHealth(db: Db, nowMs: number): Promise<OriginHealth[]> {
  const rows = await db.kysely
    .selectFrom('deliveries as d')
    .innerJoin('hooks as h', 'h.id', 'd.hook_id')
    .select([
      sql<string>`coalesce(h.target_origin, 'invalid')`.as('origin'),
      sql<number>`coalesce(sum(CASE WHEN d.status = 'pending' AND d.attempts = 0 THEN 1 ELSE 0 END), 0)`.as('pending'),
      sql<number>`coalesce(sum(CASE WHEN d.status = 'pending' AND d.attempts > 0 THEN 1 ELSE 0 END), 0)`.as('waiting'),
      sql<number>`coalesce(sum(CASE WHEN d.status = 'dead' THEN 1 ELSE 0 END), 0)`.as('dead'),
      sql<number | null>`min(${pendingDueAt('d')})`.as('first_due'),
    ])
    .where('d.status', 'in', ['pending', 'dead'])
    .groupBy(sql`coalesce(h.target_origin, 'invalid')`)
    .execute();
  return rows
    .map((row) => ({
      target_origin: row.origin,
      pending: Number(row.pending),
      waiting: Number(row.waiting),
      dead: Number(row.dead),
      oldest_due_age_ms: row.first_due === null ? 0 : Math.max(0, nowMs - Number(row.first_due)),
    }))
    .sort((a, b) => b.pending + b.waiting - (a.pending + a.waiting) || a.target_origin.localeCompare(b.target_origin));
}

/** The poller's watches: how many, how many overdue by more than an interval, paused. */
export async function pollerHealth(db: Db, nowMs: number, intervalMs: number): Promise<{ watched_keys: number; overdue_keys: number; paused_keys: number }> {
  const row = await db.kysely
    .selectFrom('watches')
    .select([
      sql<number>`coalesce(sum(CASE WHEN paused_reason IS NULL THEN 1 ELSE 0 END), 0)`.as('watched'),
      sql<number>`coalesce(sum(CASE WHEN paused_reason IS NULL AND leased_until <= ${nowMs} AND next_poll_at < ${nowMs - intervalMs} THEN 1 ELSE 0 END), 0)`.as(
        'overdue',
      ),
      sql<number>`coalesce(sum(CASE WHEN paused_reason IS NOT NULL THEN 1 ELSE 0 END), 0)`.as('paused'),
    ])
    .executeTakeFirstOrThrow();
  return { watched_keys: Number(row.watched), overdue_keys: Number(row.overdue), paused_keys: Number(row.paused) };
}

import { sql, type Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import { recordAttempts, recordAttemptsIn } from './attempt-log.js';
import type { AttemptRecord, ClaimOptions, ClaimResult, Due } from './delivery-types.js';
import { sqliteLease, type DeliveryStore } from './delivery-store.js';
import { chunks } from '../db/chunks.js';

/**
 * The delivery queue on SQLite (the contract: delivery-store.ts). A claim is a few statements
 * in one transaction, which holds SQLite's one writer from its start (BEGIN IMMEDIATE): no other
 * claim, here or in another process, reads the candidates until it commits, so no row is
 * leased twice without row locks. The records of a round are written first, in the same
 * transaction (attempt-log.ts).
 */
export class SqliteDeliveryStore implements DeliveryStore {
  constructor(private readonly db: Db) {}

  claimDue(now: number, options: ClaimOptions): Promise<ClaimResult> {
    return this.db.transaction(async (trx) => {
      const records = options.records ?? [];
      await recordAttemptsIn(trx, records);
      return claimIn(trx, now, options, records);
    });
  }

  recordOutcomes(records: AttemptRecord[]): Promise<void> {
    return recordAttempts(this.db, records);
  }

  /**
   * One statement per chunk; a row is still ours when its lease end is one this replica set (a
   * takeover sets a later one) and it is still pending.
   */
  async renewLeases(held: Due[], until: number): Promise<Set<number>> {
    const renewed = new Set<number>();
    for (const part of chunks(held)) {
      const rows = await this.db.kysely
        .updateTable('deliveries')
        .set(sqliteLease(until))
        .where(
          'id',
          'in',
          part.map((d) => d.id),
        )
        .where('leased_until', 'in', [...new Set(part.map((d) => d.leased_until))])
        .where('status', '=', 'pending')
        .returning('id')
        .execute();
      for (const row of rows) renewed.add(Number(row.id));
    }
    return renewed;
  }

  async releaseLeases(ids: number[], now: number): Promise<void> {
    for (const part of chunks(ids)) {
      await this.db.kysely
        .updateTable('deliveries')
        .set({ leased_until: 0, next_attempt_at: now })
        .where('id', 'in', part)
        .where('status', '=', 'pending')
        .execute();
    }
  }
}

/**
 * Leases due deliveries inside the claim's transaction. Candidates are read in fair order
 * (`fair_at`, docs/webhooks.md), at most `rooms` (or `fresh`) per origin are leased, and the
 * lease holds each delivery until its end (`leased_until`) and moves its due time there too
 * (`sqliteLease`).
 */
async function claimIn(trx: Kysely<Tables>, now: number, options: ClaimOptions, recorded: AttemptRecord[]): Promise<ClaimResult> {
  const rooms = options.rooms ?? new Map<string, number>();
  const saturated = [...rooms].filter(([, room]) => room <= 0).map(([origin]) => origin);
  // Anything due at all? One step on the due index; without it, the fair-order scan below
  // would walk every waiting retry to find out there is nothing to do.
  const anyDue = await trx
    .selectFrom('deliveries')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where('leased_until', '<=', now)
    .limit(1)
    .executeTakeFirst();
  if (!anyDue) return { due: [], seen: 0 };
  // Candidates first, ids and origins only: some may be left for later (their origin has no
  // room), so the payloads are read for the picked ones alone.
  const candidates = await trx
    .selectFrom('deliveries as d')
    .innerJoin('hooks as h', 'h.id', 'd.hook_id')
    .select(['d.id', sql<string>`coalesce(h.target_origin, 'invalid')`.as('target_origin')])
    .where('d.status', '=', 'pending')
    // `+` keeps the planner off the due index here: the scan follows deliveries_fair
    // (status, fair_at, next_attempt_at) in fair order, checking dueness in the index
    // (a leased row's due time is its lease's end), instead of sorting every due row.
    .where(sql<number>`+d.next_attempt_at`, '<=', now)
    .where('d.leased_until', '<=', now)
    .where('h.status', '!=', 'disabled')
    .$if(saturated.length > 0, (q) => q.where(sql<string>`coalesce(h.target_origin, 'invalid')`, 'not in', saturated))
    // Rows recorded in this transaction are not claimed by it (as on PostgreSQL); one parameter however many.
    .$if(recorded.length > 0, (q) => q.where(sql<boolean>`d.id NOT IN (SELECT value FROM json_each(${JSON.stringify(recorded.map((r) => r.delivery.id))}))`))
    // Fair across hooks: in the order of their virtual times (webhooks/fan-out.ts), so
    // one hook's backlog delays only that hook.
    .orderBy('d.fair_at')
    .orderBy('d.id')
    .limit(options.limit)
    .execute();
  const fresh = options.fresh ?? options.limit;
  const taken = new Map<string, number>();
  const ids = candidates
    .filter((d) => {
      const count = taken.get(d.target_origin) ?? 0;
      if (count >= (rooms.get(d.target_origin) ?? fresh)) return false;
      taken.set(d.target_origin, count + 1);
      return true;
    })
    .map((d) => Number(d.id));
  if (ids.length === 0) return { due: [], seen: 0 };
  const until = now + options.leaseMs;
  await trx.updateTable('deliveries').set(sqliteLease(until)).where('id', 'in', ids).execute();
  const rows = await trx
    .selectFrom('deliveries as d')
    .innerJoin('hooks as h', 'h.id', 'd.hook_id')
    .innerJoin('events as e', 'e.seq', 'd.event_seq')
    .select([
      'd.id',
      'd.hook_id',
      'd.webhook_id',
      'd.attempts',
      'h.target_url',
      sql<string>`coalesce(h.target_origin, 'invalid')`.as('target_origin'),
      'h.secret_cipher',
      'h.secret_previous_cipher',
      'h.secret_previous_until',
      'e.id as event_id',
      'e.type',
      'e.occurred_at',
      'e.payload',
      'd.fair_at',
    ])
    .where('d.id', 'in', ids)
    .orderBy('d.fair_at')
    .orderBy('d.id')
    .execute();
  return {
    due: rows.map((r) => ({
      ...r,
      id: Number(r.id),
      fair_at: Number(r.fair_at),
      secret_previous_until: r.secret_previous_until === null ? null : Number(r.secret_previous_until),
      leased_until: until,
    })),
    seen: candidates.length,
  };
}

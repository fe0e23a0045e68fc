import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { chunks } from '../db/chunks.js';
import type { Clock } from '../time/timestamps.js';
import { expireDeliveries, recordAttempts, recordAttemptsIn } from './attempt-log.js';
import type { AttemptRecord, ClaimOptions, Due } from './delivery-types.js';

export type { AttemptRecord, Candidate, ClaimOptions, Due, Outcome } from './delivery-types.js';

/**
 * The delivery queue (docs/webhooks.md): the `deliveries` table. A due delivery is leased to
 * one replica (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so replicas claim disjoint rows without
 * waiting; SQLite: under its write lock); a lease that outlives its replica expires and the
 * delivery is sent again with the same `webhook-id`.
 */
export class DeliveryQueue {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async claim(options: ClaimOptions): Promise<Due[]> {
    const now = this.clock.now();
    return this.db.transaction(async (trx) => {
      await recordAttemptsIn(trx, options.records ?? []);
      // Candidates first, ids and origins only: most may be left for later (their origin's
      // lane is full), so the payloads are read for the picked ones alone.
      // Anything due at all? One step on the due index; without it, the fair-order scan below
      // would walk every waiting retry to find out there is nothing to do.
      const anyDue = await trx.selectFrom('deliveries').select('id').where('status', '=', 'pending').where('next_attempt_at', '<=', now).limit(1).executeTakeFirst();
      if (!anyDue) return [];
      const candidates = await trx
        .selectFrom('deliveries as d')
        .innerJoin('hooks as h', 'h.id', 'd.hook_id')
        .select(['d.id', sql<string>`coalesce(h.target_origin, 'invalid')`.as('target_origin')])
        .where('d.status', '=', 'pending')
        // `+` keeps both planners off the due index here: the scan follows deliveries_fair
        // (status, fair_at, next_attempt_at) in fair order, checking dueness in the index,
        // instead of sorting every due row.
        .where(sql<number>`+d.next_attempt_at`, '<=', now)
        .where('h.status', '!=', 'disabled')
        .$if(options.saturated.length > 0, (q) => q.where('h.target_origin', 'not in', options.saturated))
        // Fair across hooks: in the order of their virtual times (webhooks/fan-out.ts), so
        // one hook's backlog delays only that hook.
        .orderBy('d.fair_at')
        .orderBy('d.id')
        .limit(options.limit)
        .$if(this.db.engine === 'postgres', (q) => q.forUpdate('d').skipLocked())
        .execute();
      const picked = options.pick(candidates.map((c) => ({ id: Number(c.id), target_origin: c.target_origin })));
      if (picked.length === 0) return [];
      const ids = picked.map((d) => d.id);
      await trx
        .updateTable('deliveries')
        // The lease also moves the delivery's due time to its end: the due-index scan of the
        // next claim then skips leased rows instead of reading past them, and a lease that
        // outlives its replica simply makes the delivery due again.
        .set({ leased_until: now + options.leaseMs, next_attempt_at: now + options.leaseMs })
        .where('id', 'in', ids)
        .execute();
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
          'e.id as event_id',
          'e.type',
          'e.occurred_at',
          'e.payload',
        ])
        .where('d.id', 'in', ids)
        .orderBy('d.fair_at')
        .orderBy('d.id')
        .execute();
      return rows.map((r) => ({ ...r, id: Number(r.id), leased_until: now + options.leaseMs }));
    });
  }

  /**
   * Extends the leases of deliveries this replica still holds to `leaseMs` from now, and
   * returns those it still held. A lease that ended and was claimed by another replica (its
   * `leased_until` is no longer ours), a delivery recorded, cancelled or deleted meanwhile:
   * not renewed, and the caller lets go of it.
   */
  async renew(held: Due[], leaseMs: number): Promise<Due[]> {
    const until = this.clock.now() + leaseMs;
    const renewed = new Set<number>();
    // One statement per chunk: a row is still ours when its lease end is one this replica
    // set (a takeover sets a later one).
    for (const part of chunks(held)) {
      const rows = await this.db.kysely
        .updateTable('deliveries')
        .set({ leased_until: until, next_attempt_at: until })
        .where('id', 'in', part.map((d) => d.id))
        .where('leased_until', 'in', [...new Set(part.map((d) => d.leased_until))])
        .where('status', '=', 'pending')
        .returning('id')
        .execute();
      for (const row of rows) renewed.add(Number(row.id));
    }
    const kept = held.filter((d) => renewed.has(d.id));
    for (const d of kept) d.leased_until = until;
    return kept;
  }

  /** Gives up leases of deliveries that were claimed but not sent (a stopping replica). */
  async release(ids: number[]): Promise<void> {
    for (const part of chunks(ids)) {
      await this.db.kysely
        .updateTable('deliveries')
        .set({ leased_until: 0, next_attempt_at: this.clock.now() })
        .where('id', 'in', part)
        .where('status', '=', 'pending')
        .execute();
    }
  }

  /** Records finished attempts in one transaction (see `recordAttempts`). */
  record(records: AttemptRecord[]): Promise<void> {
    return recordAttempts(this.db, records);
  }

  /** Gives up pending deliveries whose event was logged before `cutoff` (see `expireDeliveries`). */
  expire(cutoff: number, reason: string): Promise<number> {
    return expireDeliveries(this.db, this.clock.now(), cutoff, reason);
  }

  /**
   * The queue for metrics: deliveries pending (never tried), retrying (tried, due again) and
   * dead, and how long the oldest due one has waited (0 when none is due). Leased deliveries
   * count as pending or retrying; their due time is their lease's end.
   */
  async stats(): Promise<{ pending: number; retrying: number; dead: number; oldestDueMs: number }> {
    const now = this.clock.now();
    const row = await this.db.kysely
      .selectFrom('deliveries')
      .select([
        sql<number>`coalesce(sum(CASE WHEN status = 'pending' AND attempts = 0 THEN 1 ELSE 0 END), 0)`.as('pending'),
        sql<number>`coalesce(sum(CASE WHEN status = 'pending' AND attempts > 0 THEN 1 ELSE 0 END), 0)`.as('retrying'),
        sql<number>`coalesce(sum(CASE WHEN status = 'dead' THEN 1 ELSE 0 END), 0)`.as('dead'),
        sql<number | null>`min(CASE WHEN status = 'pending' THEN next_attempt_at END)`.as('first_due'),
      ])
      .where('status', 'in', ['pending', 'dead'])
      .executeTakeFirstOrThrow();
    const firstDue = row.first_due === null ? null : Number(row.first_due);
    return {
      pending: Number(row.pending),
      retrying: Number(row.retrying),
      dead: Number(row.dead),
      oldestDueMs: firstDue === null ? 0 : Math.max(0, now - firstDue),
    };
  }
}

import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { chunks } from '../db/chunks.js';
import type { Clock } from '../time/timestamps.js';
import { expireDeliveries, recordAttempts, recordAttemptsIn } from './attempt-log.js';
import type { AttemptRecord, ClaimOptions, ClaimResult, Due } from './delivery-types.js';
import { claimIn } from './claim.js';
import { pgClaim, pgRecord } from './pg-delivery-statement.js';

export type { AttemptRecord, ClaimOptions, ClaimResult, Due, Outcome } from './delivery-types.js';

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
    /** Told of every batch of attempts once it is recorded (the operational events look for a 410 or a dead end). */
    private readonly onRecorded: (records: AttemptRecord[]) => void = () => undefined,
  ) {}

  /** Leases due deliveries (see `claimRound`). */
  async claim(options: ClaimOptions): Promise<Due[]> {
    return (await this.claimRound(options)).due;
  }

  /**
   * Records `options.records` and leases the next due deliveries, in fair order, at most
   * `rooms` (or `fresh`) per origin, in one transaction. PostgreSQL: one statement
   * (pg-delivery-statement.ts); SQLite: a few, under its write lock.
   */
  async claimRound(options: ClaimOptions): Promise<ClaimResult> {
    const now = this.clock.now();
    if (this.db.engine === 'postgres') {
      const records = await this.recordRefusals(options.records ?? []);
      const round = await pgClaim(this.db.kysely, now, { ...options, records });
      this.onRecorded(options.records ?? []);
      return round;
    }
    const round = await this.db.transaction(async (trx) => {
      await recordAttemptsIn(trx, options.records ?? []);
      return claimIn(trx, now, options);
    });
    this.onRecorded(options.records ?? []);
    return round;
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
  async record(records: AttemptRecord[]): Promise<void> {
    if (this.db.engine !== 'postgres') await recordAttempts(this.db, records);
    else {
      const rest = await this.recordRefusals(records);
      if (rest.length > 0) await pgRecord(this.db.kysely, rest);
    }
    this.onRecorded(records);
  }

  /**
   * PostgreSQL: a batch with a 410 among it (the hook disabled, its queue cancelled) is written
   * by the engine-neutral path; returns what is left for the one-statement path.
   */
  private async recordRefusals(records: AttemptRecord[]): Promise<AttemptRecord[]> {
    if (!records.some((r) => r.outcome === 'disabled')) return records;
    await recordAttempts(this.db, records);
    return [];
  }

  /** Gives up pending deliveries whose event was logged before `cutoff`, in slices (see `expireDeliveries`). */
  expire(cutoff: number, reason: string, signal?: AbortSignal): Promise<number> {
    return expireDeliveries(this.db, this.clock.now(), cutoff, reason, signal);
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

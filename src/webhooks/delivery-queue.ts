import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Clock } from '../time/timestamps.js';
import { expireDeliveries } from './attempt-log.js';
import type { AttemptRecord, ClaimOptions, ClaimResult, Due } from './delivery-types.js';
import type { DeliveryStore } from './delivery-store.js';
import { pendingDueAt } from '../db/delivery-due.js';

export type { AttemptRecord, ClaimOptions, ClaimResult, Due, Outcome } from './delivery-types.js';

/**
 * The delivery queue (docs/webhooks.md): the `deliveries` table. A due delivery is leased to
 * one replica; a lease that outlives its replica expires and the delivery is sent again with
 * the same `webhook-id`. Claims, records, renewals and releases are the engine's
 * `DeliveryStore` (delivery-store.ts: SQLite under its one writer, PostgreSQL with
 * `FOR UPDATE SKIP LOCKED`), chosen once by services.ts.
 */
export class DeliveryQueue {
  constructor(
    private readonly db: Db,
    private readonly store: DeliveryStore,
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
   * `rooms` (or `fresh`) per origin, together (`DeliveryStore.claimDue`).
   */
  async claimRound(options: ClaimOptions): Promise<ClaimResult> {
    const round = await this.store.claimDue(this.clock.now(), options);
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
    const renewed = await this.store.renewLeases(held, until);
    const kept = held.filter((d) => renewed.has(d.id));
    for (const d of kept) d.leased_until = until;
    return kept;
  }

  /** Gives up leases of deliveries that were claimed but not sent (a stopping replica). */
  release(ids: number[]): Promise<void> {
    return this.store.releaseLeases(ids, this.clock.now());
  }

  /** Records finished attempts in one transaction (`DeliveryStore.recordOutcomes`). */
  async record(records: AttemptRecord[]): Promise<void> {
    await this.store.recordOutcomes(records);
    this.onRecorded(records);
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
        sql<number | null>`min(${pendingDueAt()})`.as('first_due'),
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

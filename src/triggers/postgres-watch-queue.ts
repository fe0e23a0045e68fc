import type { Db } from '../db/database.js';
import { releaseWatchLease, renewWatchLeases, watchColumns, watchedAt, type Watch, type WatchClaim, type WatchQueue } from './watch-queue.js';

/**
 * The poll leases on PostgreSQL (the contract: watch-queue.ts). A claim is one statement: the
 * due keys are read with `FOR UPDATE SKIP LOCKED`, so replicas claiming at once take disjoint
 * keys without waiting for each other, and leased in the same statement.
 */
export class PostgresWatchQueue implements WatchQueue {
  constructor(private readonly db: Db) {}

  async claimDue(owner: string, now: number, claim: WatchClaim): Promise<Watch[]> {
    const rows = await this.db.kysely
      .with('picked', (db) =>
        db
          .selectFrom('watches as w')
          .select('w.key_hash')
          .where('w.paused_reason', 'is', null)
          .where('w.leased_until', '<=', now)
          .where('w.next_poll_at', '<=', now)
          .where(watchedAt(now))
          .orderBy('w.next_poll_at')
          .limit(claim.limit)
          .forUpdate()
          .skipLocked(),
      )
      .updateTable('watches')
      .from('picked')
      .set({ leased_until: now + claim.leaseMs, lease_owner: owner })
      .whereRef('watches.key_hash', '=', 'picked.key_hash')
      .returning(watchColumns.map((c) => `watches.${c}` as const))
      .execute();
    // RETURNING keeps no order: the most overdue first, as the candidates were read.
    return rows.map((r) => ({ ...r, next_poll_at: Number(r.next_poll_at) })).sort((a, b) => a.next_poll_at - b.next_poll_at);
  }

  renewLeases(owner: string, keys: string[], until: number): Promise<string[]> {
    return renewWatchLeases(this.db, owner, keys, until);
  }

  releaseLease(keyHash: string, owner: string, nextPollAt: number): Promise<void> {
    return releaseWatchLease(this.db, keyHash, owner, nextPollAt);
  }
}

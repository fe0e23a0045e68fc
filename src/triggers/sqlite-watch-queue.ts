import type { Db } from '../db/database.js';
import { releaseWatchLease, renewWatchLeases, watchColumns, watchedAt, type Watch, type WatchClaim, type WatchQueue } from './watch-queue.js';

/**
 * The poll leases on SQLite (the contract: watch-queue.ts). A claim reads the due keys and
 * leases them in one transaction, which holds SQLite's one writer from its start (BEGIN
 * IMMEDIATE): no other claim, here or in another process, reads them until it commits.
 */
export class SqliteWatchQueue implements WatchQueue {
  constructor(private readonly db: Db) {}

  claimDue(owner: string, now: number, claim: WatchClaim): Promise<Watch[]> {
    return this.db.transaction(async (trx) => {
      const rows = await trx
        .selectFrom('watches as w')
        .select(watchColumns)
        .where('w.paused_reason', 'is', null)
        .where('w.leased_until', '<=', now)
        .where('w.next_poll_at', '<=', now)
        .where(watchedAt(now))
        .orderBy('w.next_poll_at')
        .limit(claim.limit)
        .execute();
      if (rows.length > 0) {
        await trx
          .updateTable('watches')
          .set({ leased_until: now + claim.leaseMs, lease_owner: owner })
          .where(
            'key_hash',
            'in',
            rows.map((r) => r.key_hash),
          )
          .execute();
      }
      return rows.map((r) => ({ ...r, next_poll_at: Number(r.next_poll_at) }));
    });
  }

  renewLeases(owner: string, keys: string[], until: number): Promise<string[]> {
    return renewWatchLeases(this.db, owner, keys, until);
  }

  releaseLease(keyHash: string, owner: string, nextPollAt: number): Promise<void> {
    return releaseWatchLease(this.db, keyHash, owner, nextPollAt);
  }
}

import { expressionBuilder, sql, type Expression, type SqlBool } from 'kysely';
import type { Db } from '../db/database.js';
import { chunks } from '../db/chunks.js';
import type { Tables } from '../db/tables.js';

export interface Watch {
  key_hash: string;
  user_id: string | null;
  key_cipher: string | null;
  baseline_at: number | null;
  paused_reason: string | null;
  /** The digest of the statuses in the key's snapshot, when it has one (poll-comparison.ts). */
  snapshot_digest: string | null;
  /** When the key is (or was, for a claimed key) due for its next poll. */
  next_poll_at: number;
}

export const watchColumns = ['key_hash', 'user_id', 'key_cipher', 'baseline_at', 'paused_reason', 'snapshot_digest', 'next_poll_at'] as const;

/** What a claim takes: at most `limit` keys, leased for `leaseMs`. */
export interface WatchClaim {
  limit: number;
  leaseMs: number;
}

/**
 * The poll leases of the watched keys, one implementation per engine (sqlite-watch-queue.ts,
 * postgres-watch-queue.ts), picked once by services.ts; WatchStore asks for these operations
 * and never for an engine. test/integration/queue-stores.test.ts is their one contract, run on
 * both engines:
 *
 * - `claimDue` leases to `owner`, until `leaseMs` after `now`, up to `limit` keys that are
 *   watched (`watchedAt`), not paused, not leased (a lease that ended counts as none) and
 *   due; the most overdue first, each with the poll time it was due at (`next_poll_at`). Two replicas claiming at once never lease one
 *   key both.
 * - `renewLeases` moves on the leases `owner` still holds and returns their keys; `releaseLease` ends one, the key due
 *   again at `nextPollAt`.
 */
export interface WatchQueue {
  claimDue(owner: string, now: number, claim: WatchClaim): Promise<Watch[]>;
  renewLeases(owner: string, keys: string[], until: number): Promise<string[]>;
  releaseLease(keyHash: string, owner: string, nextPollAt: number): Promise<void>;
}

const dayMs = 86_400_000;

/**
 * A disabled hook keeps its key watched: the events it misses are still logged, so enabling it
 * and a recover deliver them (docs/webhooks.md, "When something goes wrong"), until the hook is
 * deleted a retention period after it was disabled.
 */
const watchedHookStatuses = ['active', 'disabled'] as const;

/**
 * True for a watch (`watches as w`) whose key is watched at `now`: it has an active (or
 * disabled) hook, or called the polling trigger in the last 24 hours.
 */
export function watchedAt(now: number): Expression<SqlBool> {
  const eb = expressionBuilder<Tables & { w: Tables['watches'] }, 'w'>();
  return eb.or([
    eb('w.last_trigger_at', '>', now - dayMs),
    eb.exists(
      eb
        .selectFrom('hooks as h')
        .select(sql`1`.as('one'))
        .whereRef('h.key_hash', '=', 'w.key_hash')
        .where('h.status', 'in', watchedHookStatuses),
    ),
  ]);
}

/** `renewLeases`, the same on both engines. */
export async function renewWatchLeases(db: Db, owner: string, keys: string[], until: number): Promise<string[]> {
  const kept: string[] = [];
  for (const part of chunks(keys)) {
    const rows = await db.kysely
      .updateTable('watches')
      .set({ leased_until: until })
      .where('key_hash', 'in', part)
      .where('lease_owner', '=', owner)
      .where('leased_until', '>', 0)
      .returning('key_hash')
      .execute();
    for (const row of rows) kept.push(row.key_hash);
  }
  return kept;
}

/** `releaseLease`, the same on both engines. */
export async function releaseWatchLease(db: Db, keyHash: string, owner: string, nextPollAt: number): Promise<void> {
  await db.kysely
    .updateTable('watches')
    .set({ leased_until: 0, lease_owner: null, next_poll_at: nextPollAt })
    .where('key_hash', '=', keyHash)
    .where('lease_owner', '=', owner)
    .execute();
}

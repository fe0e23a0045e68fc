import type { AttemptRecord, ClaimOptions, ClaimResult, Due } from './delivery-types.js';

/** A claimed row as an engine returns it: its numbers may come back as strings (PostgreSQL's bigint). */
export type ClaimedRow = Omit<Due, 'id' | 'attempts' | 'fair_at' | 'secret_previous_until' | 'leased_until'> & {
  id: number | string;
  attempts: number | string;
  fair_at: number | string;
  secret_previous_until?: number | string | null;
};

/** A claimed row as a `Due`, leased until `until` (ms). */
export function leasedDue(row: ClaimedRow, until: number): Due {
  return {
    ...row,
    id: Number(row.id),
    attempts: Number(row.attempts),
    fair_at: Number(row.fair_at),
    secret_previous_until: row.secret_previous_until === null || row.secret_previous_until === undefined ? null : Number(row.secret_previous_until),
    leased_until: until,
  };
}

/**
 * The delivery queue's writes, one implementation per engine (sqlite-delivery-store.ts,
 * postgres-delivery-store.ts), picked once by services.ts; DeliveryQueue asks for these
 * operations and never for an engine. test/integration/queue-stores.test.ts is their one
 * contract, run on both engines:
 *
 * - `claimDue` leases due deliveries in fair order (`fair_at`, then id; docs/webhooks.md),
 *   skipping those leased, recorded or cancelled and the queues of disabled hooks, at most
 *   `rooms` (or `fresh`) per origin; a lease holds each one until its end (`leased_until`; on
 *   PostgreSQL that column alone, which no index holds, so a lease writes no index entry and
 *   `next_attempt_at` stays; on SQLite `next_attempt_at` moves there too), and a lease that
 *   ends makes the delivery due again. Two replicas claiming at once never lease one row
 *   both.
 * - `recordOutcomes` writes finished attempts: each delivery's new state (delivered, pending
 *   again at its retry time, dead; a 410 disables the hook and cancels its queue) and its line
 *   in the attempt log. A record applies only to a delivery still at the attempt before it, so
 *   a batch written again changes nothing, and a cancelled delivery stays cancelled.
 */
export interface DeliveryStore {
  /**
   * Records `options.records` (as `recordOutcomes`) and then leases the next due deliveries
   * (`now`: ms), in one transaction (PostgreSQL commits a batch with a 410 among it on its own
   * first). A delivery recorded by the call is not leased by it.
   */
  claimDue(now: number, options: ClaimOptions): Promise<ClaimResult>;
  /** Records finished attempts, in one transaction. */
  recordOutcomes(records: AttemptRecord[]): Promise<void>;
  /** Moves the leases of `held` that are still this replica's to `until` (ms); returns the ids renewed. */
  renewLeases(held: Due[], until: number): Promise<Set<number>>;
  /** Gives up the leases of `ids` still pending: due again at `now`. */
  releaseLeases(ids: number[], now: number): Promise<void>;
}

/**
 * A lease's columns on SQLite: its end in `leased_until` and, unlike PostgreSQL's (a heap-only
 * update that changes no indexed column), in `next_attempt_at` too, so the claim's scans skip
 * leased rows in the due and fair-order indexes without reading them. SQLite rewrites only the
 * index entries whose columns change: that is two per lease, and reading each leased row on
 * every claim instead cost more (docs/benchmarks.md, 2026-11-27 night).
 */
export function sqliteLease(until: number): { leased_until: number; next_attempt_at: number } {
  return { leased_until: until, next_attempt_at: until };
}

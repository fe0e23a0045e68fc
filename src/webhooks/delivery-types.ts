import type { Outcome } from './retry-policy.js';

export type { Outcome };

/** A delivery leased to this replica, with what it takes to send it. */
export interface Due {
  id: number;
  hook_id: string;
  webhook_id: string;
  attempts: number;
  target_url: string;
  target_origin: string;
  secret_cipher: string;
  /** The secret a rotation replaced, sealed, and until when (ms) deliveries are signed with it too. */
  secret_previous_cipher?: string | null;
  secret_previous_until?: number | null;
  event_id: string;
  type: string;
  occurred_at: string;
  payload: string;
  /** Its place in its origin's fair order (webhooks/fan-out.ts): lanes send in this order. */
  fair_at: number;
  /** When this replica's lease ends (ms); moved on by `renew`. */
  leased_until: number;
}

/** One finished attempt, ready to be recorded. */
export interface AttemptRecord {
  delivery: Due;
  attempt: number;
  outcome: Outcome;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: number;
  nextAttemptAt: number | null;
  /** The request headers sent (null when none were: the send failed before). */
  requestHeaders?: Record<string, string> | null;
  /** The first 1,024 bytes of the answer's body (null: no answer). */
  responseBody?: string | null;
}

export interface ClaimOptions {
  /** Candidates looked at, in fair order; at most `rooms`/`fresh` of them per origin are leased. */
  limit: number;
  leaseMs: number;
  /**
   * Deliveries this replica may still take per origin it holds (its lane's room; 0 or less: the
   * origin is skipped in the query). Absent: no per-origin bound besides `fresh`.
   */
  rooms?: ReadonlyMap<string, number>;
  /** Deliveries taken at most for an origin not in `rooms` (default: `limit`). */
  fresh?: number;
  /**
   * Finished attempts to record in the same transaction, before the claim: one commit for both
   * instead of two (see `recordAttempts`).
   */
  records?: AttemptRecord[];
}

/** What one claim leased, in fair order, and how many candidates it looked at. */
export interface ClaimResult {
  due: Due[];
  /** Candidates read (0 when none was leased): `limit` means more may be due. */
  seen: number;
}

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
  event_id: string;
  type: string;
  occurred_at: string;
  payload: string;
  /** When this replica's lease ends (ms); moved on by `renew`. */
  leased_until: number;
}

/** A due delivery before it is leased: enough to choose by origin. */
export interface Candidate {
  id: number;
  target_origin: string;
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
}

export interface ClaimOptions {
  /** Candidates looked at; at most `pick` of them are leased. */
  limit: number;
  leaseMs: number;
  /** Origins at their concurrency limit: skipped in the query. */
  saturated: string[];
  /** Which candidates to lease (per-origin slots); the rest stay free for others. */
  pick: (candidates: Candidate[]) => Candidate[];
  /**
   * Finished attempts to record in the same transaction, before the claim: one commit for both
   * instead of two (see `recordAttempts`).
   */
  records?: AttemptRecord[];
}

/**
 * What one finished attempt means for its delivery (docs/webhooks.md, "Outcomes and retries"):
 *
 * - 2xx: `delivered`, never sent again;
 * - 410 Gone: `disabled`, the hook gets nothing more;
 * - anything else (a timeout, a network error, a refused target, another status): `retrying`
 *   after the next delay of the schedule, or the receiver's `Retry-After` when that is longer
 *   (capped at a day); after the last delay, `dead`.
 *
 * Pure: no clock, no I/O, so the schedule is tested against a table.
 */
export type Outcome = 'delivered' | 'disabled' | 'retrying' | 'dead';

export interface RetryDecision {
  outcome: Outcome;
  /** When the next attempt is due (ms), for `retrying`; otherwise null. */
  nextAttemptAt: number | null;
}

/** What came back from one attempt: the HTTP status (null: no answer) and Retry-After, if any. */
export interface AttemptAnswer {
  status: number | null;
  retryAfterMs?: number;
}

/** A receiver's Retry-After is honoured up to a day. */
export const maxRetryAfterMs = 86_400_000;

/**
 * `attempt`: the number of the attempt that just ended (1 for the first); `scheduleMs`:
 * WEBHOOK_RETRY_SCHEDULE_MS, the delay before each retry; `now`: when the attempt ended.
 */
export function decide(attempt: number, answer: AttemptAnswer, scheduleMs: readonly number[], now: number): RetryDecision {
  const { status } = answer;
  if (status !== null && status >= 200 && status < 300) return { outcome: 'delivered', nextAttemptAt: null };
  if (status === 410) return { outcome: 'disabled', nextAttemptAt: null };
  if (attempt > scheduleMs.length) return { outcome: 'dead', nextAttemptAt: null };
  const delay = Math.max(scheduleMs[attempt - 1]!, Math.min(answer.retryAfterMs ?? 0, maxRetryAfterMs));
  return { outcome: 'retrying', nextAttemptAt: now + delay };
}

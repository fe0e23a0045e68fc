import type { UpstreamOutcome } from './metrics.js';

/**
 * The upstream client tags each failed attempt's error with how it failed, where it still
 * knows (a status, a timeout, a body that did not parse), so the metrics need not reverse-
 * engineer messages.
 */
export function tagged<E extends Error>(err: E, outcome: UpstreamOutcome): E {
  return Object.assign(err, { upstreamOutcome: outcome });
}

/** The tag of a failed attempt; an untagged error is a failure below HTTP (`network`). */
export function outcomeOf(err: unknown): UpstreamOutcome {
  return (err as { upstreamOutcome?: UpstreamOutcome } | null)?.upstreamOutcome ?? 'network';
}

export function statusOutcome(status: number): UpstreamOutcome {
  return status >= 500 ? 'http_5xx' : status >= 400 ? 'http_4xx' : 'http_3xx';
}

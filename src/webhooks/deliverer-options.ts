import type { Logger } from 'pino';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Metrics } from '../metrics/metrics.js';
import type { Clock } from '../time/timestamps.js';
import type { DeliveryQueue } from './delivery-queue.js';
import type { WebhookSender } from './sender.js';

/** What the deliverer is built from, and the constants of its claim loop (deliverer.ts). */
export interface DelivererOptions {
  queue: DeliveryQueue;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  send: WebhookSender;
  /** Delays before each retry (WEBHOOK_RETRY_SCHEDULE_MS); after the last, a delivery is dead. */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** Deliveries in flight at once to one target origin (WEBHOOK_TARGET_CONCURRENCY). */
  perTargetConcurrency: number;
  /** Deliveries claimed and not yet finished in this replica, all targets together. */
  maxHeld?: number;
  /** How often the queue is checked when nothing wakes the deliverer (ms). */
  idleCheckMs?: number;
  metrics?: Metrics;
  /** True while more urgent work needs the CPU (the poller is behind, PollPressure): one send at a time then. */
  yieldTo?: () => boolean;
}

export const maxBackoffMs = 10_000;
/** Slots freed within this many milliseconds are refilled by one claim. */
export const coalesceMs = 2;
/**
 * Rounds of sends claimed ahead per origin: at least 16 (a lane whose rate is not known yet: the claim of a burst's start), since a lane sends in fair order a slow receiver's long lane delays no other hook, at
 * most 64 for a fast one (the lanes size them by the origin's rate).
 */
export const lookahead = { min: 16, max: 64 };
/** Candidates looked at by one claim, at most (ids in one statement). */
export const maxClaim = 500;
/** Held leases are renewed this many times per lease. */
export const renewalsPerLease = 4;

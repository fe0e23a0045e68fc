import type { Logger } from 'pino';
import { LRUCache } from 'lru-cache';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Clock } from '../time/timestamps.js';
import type { AttemptRecord, Candidate, DeliveryQueue, Due, Outcome } from './delivery-queue.js';
import type { SendResult, WebhookSender } from './sender.js';
import { signedHeaders } from './signing.js';
import type { Metrics } from '../metrics/metrics.js';

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
}

/** A receiver's Retry-After is honoured up to a day. */
const maxRetryAfterMs = 86_400_000;
/** Finished attempts are written together, at most this long after the first of them. */
const flushAfterMs = 20;
const maxBackoffMs = 10_000;
/** Slots freed within this many milliseconds are refilled by one claim. */
const coalesceMs = 2;
/** Rounds of sends claimed ahead per origin. */
const lookahead = 8;
/** Held leases are renewed this many times per lease. */
const renewalsPerLease = 4;

/**
 * The webhook delivery engine. Its queue is the `deliveries` table (DeliveryQueue), so a
 * restart or crash loses nothing: a delivery is leased while in flight, and a lease that
 * outlives its process expires and the delivery is sent again (at-least-once, same
 * `webhook-id`). Outcomes: 2xx delivered (never sent again); 410 disables the hook and cancels
 * its queue; anything else (timeout, network error, refused target, other status) retries
 * after the next delay of the schedule, or the receiver's Retry-After if longer; after the
 * last, `dead`.
 *
 * It runs as a pump with a lane per target origin: it claims due deliveries a few rounds
 * ahead per origin, sends from each lane as that origin's slots free up, and tops the lanes up
 * in the background; an origin whose lane is full is skipped by the claim, so a slow receiver
 * holds only its own slots and never the others'.
 * Finished attempts are recorded in small batches (one transaction per few milliseconds),
 * and signing secrets stay decrypted in memory, so a delivery costs little besides its POST.
 */
export class WebhookDeliverer {
  private timer: NodeJS.Timeout | null = null;
  /** When the pending timer fires (Infinity: none pending). */
  private timerAt = Infinity;
  private flushTimer: NodeJS.Timeout | null = null;
  private flushBackoffMs = 0;
  private stopped = true;
  private pumping: Promise<number> | null = null;
  private again = false;
  private backoffMs = 0;
  private readonly inFlight = new Map<string, number>();
  /** Claimed deliveries per origin, waiting for a free slot of that origin. */
  private readonly lanes = new Map<string, Due[]>();
  private total = 0;
  private readonly sending = new Set<Promise<void>>();
  private finished: AttemptRecord[] = [];
  private flushing: Promise<void> = Promise.resolve();
  private readonly secrets = new LRUCache<string, string>({ max: 10_000 });
  /** Deliveries this replica holds a lease on: in its lanes or in flight. */
  private readonly leased = new Set<Due>();
  private renewTimer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;

  constructor(private readonly options: DelivererOptions) {}

  /** Deliveries claimed and not yet finished, in all. */
  private get maxHeld(): number {
    return this.options.maxHeld ?? 1000;
  }

  /**
   * A claim's lease covers one send and its record (2 × WEBHOOK_TIMEOUT_MS + 5 s) and is
   * renewed while the delivery waits in its lane, is in flight or waits for its record, so a replica that dies
   * leaves its deliveries due again within that, however far ahead it had claimed.
   */
  private get leaseMs(): number {
    return 2 * this.options.timeoutMs + 5000;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
    this.renewTimer = setInterval(() => this.renew(), Math.max(50, Math.floor(this.leaseMs / renewalsPerLease)));
    this.renewTimer.unref();
  }

  /**
   * Renews the leases held; a delivery whose lease was lost (it ran out while the database was
   * away and another replica claimed it, or it was cancelled) is dropped from its lane unsent.
   */
  private renew(): void {
    if (this.renewing || this.leased.size === 0) return;
    const held = [...this.leased];
    this.renewing = this.options.queue
      .renew(held, this.leaseMs)
      .then(
        (kept) => {
          if (kept.length === held.length) return;
          const keep = new Set(kept);
          const lost = new Set(held.filter((d) => !keep.has(d)));
          for (const d of lost) this.leased.delete(d);
          for (const [origin, lane] of this.lanes) {
            const left = lane.filter((d) => !lost.has(d));
            if (left.length === 0) this.lanes.delete(origin);
            else this.lanes.set(origin, left);
          }
        },
        (err: unknown) => this.options.logger.warn({ err: (err as Error).message }, 'could not renew delivery leases'),
      )
      .finally(() => {
        this.renewing = null;
      });
  }

  /** Stops claiming, lets in-flight deliveries finish (each within its timeout) and records them. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.renewTimer) clearInterval(this.renewTimer);
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    await this.pumping?.catch(() => undefined);
    await this.renewing;
    await Promise.allSettled([...this.sending]);
    await this.flush().catch((err: unknown) =>
      this.options.logger.warn({ err: (err as Error).message }, 'could not record the last attempts; their leases will expire and they will be sent again'),
    );
    // Claimed but never sent: free them now rather than when their leases expire.
    const unsent = [...this.lanes.values()].flat().map((d) => d.id);
    this.lanes.clear();
    this.leased.clear();
    await this.options.queue.release(unsent).catch(() => undefined);
  }

  /** New deliveries were queued: look now rather than at the next idle check. */
  wake(): void {
    if (this.stopped) return;
    if (this.pumping) this.again = true;
    else this.schedule(0);
  }

  /**
   * Sends every delivery due now (up to one claim's worth), waits for them and their records;
   * returns how many were attempted. For tests and tools; the running service pumps instead.
   */
  async runOnce(): Promise<number> {
    const { perTargetConcurrency } = this.options;
    const claimed = await this.options.queue.claim({
      limit: 100,
      // Sent through per-origin lanes: the last of a lane may wait for those before it.
      leaseMs: (Math.ceil(100 / perTargetConcurrency) + 1) * this.options.timeoutMs + 5000,
      saturated: [],
      pick: (candidates) => candidates,
    });
    const lanes = new Map<string, Due[]>();
    for (const d of claimed) lanes.set(d.target_origin, [...(lanes.get(d.target_origin) ?? []), d]);
    await Promise.all(
      [...lanes.values()].map((lane) =>
        Promise.all(
          Array.from({ length: Math.min(perTargetConcurrency, lane.length) }, async () => {
            for (let d = lane.shift(); d; d = lane.shift()) this.finished.push(await this.attempt(d));
          }),
        ),
      ),
    );
    await this.flush();
    return claimed.length;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Infinity;
      this.pumping = this.pump().finally(() => {
        this.pumping = null;
      });
      void this.pumping.then(
        (claimed) => {
          this.backoffMs = 0;
          const more = claimed > 0 || this.again;
          this.again = false;
          this.schedule(more ? 0 : this.options.idleCheckMs ?? 1000);
        },
        (err: unknown) => {
          this.backoffMs = Math.min(maxBackoffMs, Math.max(250, this.backoffMs * 2));
          this.options.logger.warn({ err: (err as Error).message, retryInMs: this.backoffMs }, 'deliverer cannot reach the database; backing off');
          this.schedule(this.backoffMs);
        },
      );
    }, delayMs);
  }

  /** Deliveries held per origin: in flight plus claimed and waiting in its lane. */
  private held(origin: string): number {
    return (this.inFlight.get(origin) ?? 0) + (this.lanes.get(origin)?.length ?? 0);
  }

  /**
   * Claims ahead: up to `lookahead` × the per-origin concurrency per origin (and `maxHeld` in
   * all), so each origin's lane never runs dry while the next claim is under way. Origins that
   * hold that many already are skipped in the query. Returns how many were claimed.
   */
  private async pump(): Promise<number> {
    const heldNow = this.total + [...this.lanes.values()].reduce((n, lane) => n + lane.length, 0);
    const room = this.maxHeld - heldNow;
    if (room <= 0) return 0;
    const perOrigin = this.options.perTargetConcurrency * lookahead;
    const origins = new Set([...this.inFlight.keys(), ...this.lanes.keys()]);
    const saturated = [...origins].filter((origin) => this.held(origin) >= perOrigin);
    // Candidates enough to top up every origin with room, and one origin's worth for origins
    // not held yet (a full origin is skipped in the query, so others surface at the next claim).
    const wanted = [...origins].reduce((n, origin) => n + Math.max(0, perOrigin - this.held(origin)), perOrigin);
    const claimed = await this.options.queue.claim({
      limit: Math.min(room, 200, wanted),
      leaseMs: this.leaseMs,
      saturated,
      pick: (candidates) => {
        const taken = new Map<string, number>();
        return candidates.filter((d: Candidate) => {
          const count = taken.get(d.target_origin) ?? 0;
          if (this.held(d.target_origin) + count >= perOrigin) return false;
          taken.set(d.target_origin, count + 1);
          return true;
        });
      },
    });
    for (const delivery of claimed) {
      this.leased.add(delivery);
      const lane = this.lanes.get(delivery.target_origin);
      if (lane) lane.push(delivery);
      else this.lanes.set(delivery.target_origin, [delivery]);
    }
    for (const origin of new Set(claimed.map((d) => d.target_origin))) this.drain(origin);
    return claimed.length;
  }

  /**
   * Starts sending from an origin's lane while it has free slots. A delivery whose lease no
   * longer covers a send (renewals failed while the database was away) is let go unsent:
   * whoever claims it after the lease sends it.
   */
  private drain(origin: string): void {
    const lane = this.lanes.get(origin);
    while (lane && lane.length > 0 && (this.inFlight.get(origin) ?? 0) < this.options.perTargetConcurrency) {
      const next = lane.shift()!;
      if (next.leased_until - this.options.clock.now() < this.options.timeoutMs) this.leased.delete(next);
      else this.launch(next);
    }
    if (lane && lane.length === 0) this.lanes.delete(origin);
  }

  private launch(delivery: Due): void {
    const origin = delivery.target_origin;
    this.inFlight.set(origin, (this.inFlight.get(origin) ?? 0) + 1);
    this.total += 1;
    const work = this.attempt(delivery).then((record) => {
      this.finished.push(record);
      this.flushSoon();
    });
    this.sending.add(work);
    void work.finally(() => {
      this.sending.delete(work);
      this.total -= 1;
      const left = (this.inFlight.get(origin) ?? 1) - 1;
      if (left === 0) this.inFlight.delete(origin);
      else this.inFlight.set(origin, left);
      if (this.stopped) return;
      // The freed slot takes the next claimed delivery of the lane at once. The lane is topped
      // up once it has run half down (so one claim brings many), or when the origin has nothing
      // left to send; completions within a few ms share one claim.
      this.drain(origin);
      const low = this.held(origin) <= (this.options.perTargetConcurrency * lookahead) / 2;
      if (!low && this.lanes.has(origin)) return;
      if (this.pumping) this.again = true;
      else if (this.timerAt > Date.now() + coalesceMs) this.schedule(coalesceMs);
    });
  }

  /**
   * Records the finished attempts shortly. When the database cannot take them, they are kept
   * and written again with backoff (a record is idempotent, see DeliveryQueue.record): their
   * deliveries stay leased meanwhile, and are due again as soon as the records land rather
   * than when the leases expire.
   */
  private flushSoon(delayMs = flushAfterMs): void {
    if (this.flushTimer) return;
    this.flushTimer = setTimeout(() => {
      this.flushTimer = null;
      void this.flush().then(
        () => {
          this.flushBackoffMs = 0;
        },
        (err: unknown) => {
          this.flushBackoffMs = Math.min(maxBackoffMs, Math.max(250, this.flushBackoffMs * 2));
          this.options.logger.warn({ err: (err as Error).message, retryInMs: this.flushBackoffMs }, 'could not record delivery attempts; retrying');
          if (!this.stopped) this.flushSoon(this.flushBackoffMs);
        },
      );
    }, delayMs);
  }

  /** Writes the finished attempts so far in one transaction, after any flush in progress; on failure they stay queued. */
  private flush(): Promise<void> {
    this.flushing = this.flushing.catch(() => undefined).then(async () => {
      const batch = this.finished;
      this.finished = [];
      try {
        await this.options.queue.record(batch);
        // Recorded: the lease is over (kept renewed until here, so a slow record loses nothing).
        for (const r of batch) this.leased.delete(r.delivery);
      } catch (err) {
        this.finished = batch.concat(this.finished);
        throw err;
      }
    });
    return this.flushing;
  }

  /** Signs and sends one delivery; never throws. */
  private async attempt(delivery: Due): Promise<AttemptRecord> {
    const { clock, send } = this.options;
    const body = `{"type":${JSON.stringify(delivery.type)},"timestamp":${JSON.stringify(delivery.occurred_at)},"data":${delivery.payload}}`;
    let result: SendResult;
    try {
      const headers = signedHeaders(this.secret(delivery), delivery.webhook_id, Math.floor(clock.now() / 1000), body);
      result = await send(delivery.target_url, body, { ...headers });
    } catch (err) {
      result = { status: null, error: (err as Error).message, durationMs: 0 };
    }
    return this.outcome(delivery, result);
  }

  /** The hook's signing secret, unsealed once and kept by its ciphertext. */
  private secret(delivery: Due): string {
    let secret = this.secrets.get(delivery.secret_cipher);
    if (secret === undefined) {
      secret = this.options.box.open(delivery.secret_cipher);
      this.secrets.set(delivery.secret_cipher, secret);
    }
    return secret;
  }

  private outcome(delivery: Due, result: SendResult): AttemptRecord {
    const { clock, retryScheduleMs, logger } = this.options;
    const now = clock.now();
    const attempt = delivery.attempts + 1;
    let outcome: Outcome;
    let nextAttemptAt: number | null = null;
    if (result.status !== null && result.status >= 200 && result.status < 300) outcome = 'delivered';
    else if (result.status === 410) outcome = 'disabled';
    else if (attempt > retryScheduleMs.length) outcome = 'dead';
    else {
      outcome = 'retrying';
      nextAttemptAt = now + Math.max(retryScheduleMs[attempt - 1]!, Math.min(result.retryAfterMs ?? 0, maxRetryAfterMs));
    }
    this.options.metrics?.deliveryOutcome(outcome, result.durationMs);
    logger[outcome === 'delivered' ? 'debug' : 'info'](
      { hook: delivery.hook_id, event: delivery.event_id, attempt, status: result.status, error: result.error, outcome },
      'webhook attempt',
    );
    return {
      delivery,
      attempt,
      outcome,
      statusCode: result.status,
      error: result.error,
      durationMs: result.durationMs,
      attemptedAt: now,
      nextAttemptAt,
    };
  }
}

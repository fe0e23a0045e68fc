import { AsyncResource } from 'node:async_hooks';
import type { Logger } from 'pino';

export interface ClaimLoopOptions {
  /** What the loop does, for its log lines ("poller", "deliverer"). */
  name: string;
  logger: Logger;
  /**
   * One round: claims due work with a lease and starts it (tracking it with `track`). Returns
   * true when there may be more to claim at once. A throw means the database is out of reach:
   * the loop backs off and tries again, it never exits.
   */
  round: () => Promise<boolean>;
  /** Delay before the first round. */
  firstRoundMs: number;
  /** How often the loop looks when nothing wakes it. */
  idleMs: number;
  /** Work finished within this many milliseconds is followed by one round, not one each. */
  coalesceMs: number;
  /** The first delay after a failed round; it doubles up to `maxBackoffMs`. */
  minBackoffMs: number;
  maxBackoffMs: number;
  /** Held leases are renewed every `everyMs` while the loop runs (a renewal that throws is logged and tried at the next). */
  renew?: { everyMs: number; run: () => Promise<void> };
}

/**
 * The shape every piece of background work shares (the device-status poller, the webhook
 * deliverer): claim due work with a lease in the database, renew the leases while it runs,
 * claim again when a slot frees up or when the idle timer fires, back off while the database
 * is out of reach, and stop cleanly: no new round, the round under way and the work started
 * are awaited. Releasing what was claimed and never started is the owner's, after `stop`.
 *
 * One round at a time: a wake during a round makes the next one start right after it.
 */
export class ClaimLoop {
  private timer: NodeJS.Timeout | null = null;
  /** When the pending timer fires (Infinity: none pending). */
  private timerAt = Infinity;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = true;
  private backoffMs = 0;
  private readonly work = new Set<Promise<unknown>>();
  private renewTimer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;
  /**
   * The context the loop was made in (no request's): a round woken by a request (its poll's
   * events wake the deliverer) runs there, not in the request's, whose database waits share
   * one deadline (db/wait-budget.ts).
   */
  private readonly context = new AsyncResource('ClaimLoop');

  constructor(private readonly options: ClaimLoopOptions) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  start(): void {
    this.stopped = false;
    this.schedule(this.options.firstRoundMs);
    const renew = this.options.renew;
    if (renew) {
      this.renewTimer = setInterval(() => this.renewNow(renew.run), renew.everyMs);
      this.renewTimer.unref();
    }
  }

  /** No new round; waits for the round under way, a renewal under way and the work tracked. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    await this.running;
    await this.renewing;
    while (this.work.size > 0) await Promise.allSettled([...this.work]);
  }

  /**
   * Asks for a round within `delayMs` (sooner if one is due sooner); during a round, for
   * another right after it.
   */
  wake(delayMs = 0): void {
    if (this.stopped) return;
    if (this.running) this.again = true;
    else if (this.timerAt > Date.now() + delayMs) this.schedule(delayMs);
  }

  /** Keeps `work` until it settles, so `stop` waits for it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.work.add(work);
    void work.then(
      () => this.work.delete(work),
      () => this.work.delete(work),
    );
    return work;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = Date.now() + delayMs;
    this.timer = setTimeout(
      this.context.bind(() => {
        this.timer = null;
        this.timerAt = Infinity;
        this.running = this.runRound().finally(() => {
          this.running = null;
        });
      }),
      delayMs,
    );
  }

  private async runRound(): Promise<void> {
    this.again = false;
    let next: number;
    try {
      const more = await this.options.round();
      this.backoffMs = 0;
      next = more || this.again ? 0 : this.options.idleMs;
    } catch (err) {
      const { minBackoffMs, maxBackoffMs } = this.options;
      this.backoffMs = Math.min(maxBackoffMs, Math.max(minBackoffMs, this.backoffMs * 2));
      this.options.logger.warn({ err: (err as Error).message, retryInMs: this.backoffMs }, `${this.options.name} cannot reach the database; backing off`);
      next = this.backoffMs;
    }
    // Cleared first so that `schedule` is not refused by a timer of this round.
    this.running = null;
    this.schedule(next);
  }

  private renewNow(run: () => Promise<void>): void {
    if (this.renewing || this.stopped) return;
    this.renewing = run()
      .catch((err: unknown) => this.options.logger.warn({ err: (err as Error).message }, `${this.options.name} could not renew its leases`))
      .finally(() => {
        this.renewing = null;
      });
  }
}

import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { retryDeadlocks } from '../db/deadlock.js';
import type { Clock } from '../time/timestamps.js';
import { retentionMs, type EventLog } from '../triggers/event-log.js';
import type { SnapshotStore } from '../triggers/snapshots.js';
import type { DeliveryQueue } from './delivery-queue.js';
import type { HookStore } from './hook-store.js';

export const expiredReason = 'The event passed the 7-day retention before it could be delivered';

/** Rows deleted from which a sweep counts as bulk: the planner's statistics renewed, SQLite's log cut back. */
const bulkRows = 1_000;

/** What one sweep did, per table, and how long it took. */
export interface SweepReport {
  /** Pending deliveries given up (dead, with the reason). */
  expired: number;
  events: number;
  deliveries: number;
  attempts: number;
  hooks: number;
  /** Snapshot rows of devices missing from their listings longer than the retention. */
  snapshots: number;
  durationMs: number;
  /** Stopped part way by a shutdown; the rest goes at the next sweep. */
  stopped: boolean;
}

export interface RetentionParts {
  db: Db;
  clock: Clock;
  logger: Logger;
  queue: DeliveryQueue;
  log: EventLog;
  hooks: HookStore;
  /** The snapshot rows of devices missing from their listings longer than the retention go too. */
  snapshots: SnapshotStore;
  /** Time from the end of one sweep to the start of the next. */
  intervalMs: number;
}

/**
 * The 7-day retention (docs/webhooks.md, "Retention"), a loop of its own beside the poller and
 * the deliverer, once per interval, each table by its own writer, in this order:
 * 1. deliveries still pending whose event is older than the retention become `dead`, with an
 *    attempt record that gives the reason (nothing is dropped silently);
 * 2. events older than the retention go, unless a delivery of theirs is pending or was
 *    attempted within it (their finished deliveries and attempts go with them);
 * 3. hooks disabled longer ago than the retention go.
 *
 * Every step works in short slices with other work in between (`db/slices.ts`), so however much
 * has piled up, no request waits behind the sweep; a shutdown stops it between two slices.
 * Each sweep that did something is logged with its rows per table and its duration; after a
 * bulk one, SQLite's write-ahead log is cut back within its limit.
 */
export class RetentionSweeper {
  private running: Promise<SweepReport> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopping = new AbortController();

  constructor(private readonly parts: RetentionParts) {}

  start(): void {
    this.stopping = new AbortController();
    this.schedule();
  }

  /** No new sweep; the one under way stops at its next slice and is awaited. */
  async stop(): Promise<void> {
    this.stopping.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  /** One sweep now, or the one under way. Throws what the database threw (unavailable: 503 or a back-off). */
  runOnce(): Promise<SweepReport> {
    this.running ??= this.sweep(this.stopping.signal).finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private schedule(): void {
    if (this.stopping.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.runOnce()
        .catch((err: unknown) => this.parts.logger.warn({ err: (err as Error).message }, 'retention sweep failed; it runs again next interval'))
        .finally(() => this.schedule());
    }, this.parts.intervalMs);
    this.timer.unref();
  }

  private async sweep(signal: AbortSignal): Promise<SweepReport> {
    const { db, clock, logger, queue, log, hooks } = this.parts;
    const started = performance.now();
    const cutoff = clock.now() - retentionMs;
    const expired = await queue.expire(cutoff, expiredReason, signal);
    // Retried, not ordered: a slice of the event log's prune deletes the attempts, deliveries
    // and events of many hooks, the events' own delete cascading to deliveries too, so taking
    // every hook first would hold their deletes for the whole slice. A deadlock's victim is one
    // slice, rolled back whole; the prune reads what is left from the tables again (slices
    // already committed stay done), so running it again is safe. The rows of a run that lost
    // a deadlock are left out of the sweep's line.
    const pruned = await retryDeadlocks(() => log.prune(signal));
    const hooksGone = signal.aborted ? 0 : await hooks.pruneDisabled(cutoff, signal);
    const snapshotsGone = signal.aborted ? 0 : await this.parts.snapshots.pruneMissing(cutoff);
    const report: SweepReport = {
      expired,
      events: pruned.events,
      deliveries: pruned.deliveries,
      attempts: pruned.attempts,
      hooks: hooksGone,
      snapshots: snapshotsGone,
      durationMs: Math.round(performance.now() - started),
      stopped: signal.aborted,
    };
    const rows = report.events + report.deliveries + report.attempts + report.hooks + report.snapshots;
    if (rows + expired === 0 && !report.stopped) {
      logger.debug(report, 'retention sweep');
      return report;
    }
    logger.info(report, 'retention sweep');
    if (rows >= bulkRows) {
      await db
        .refreshStatistics(['events', 'deliveries', 'delivery_attempts'], rows)
        .catch((err: unknown) => logger.warn({ err: (err as Error).message }, 'could not refresh the planner statistics'));
      if (!(await db.truncateLog())) logger.warn('the write-ahead log is still above its limit after the retention sweep; the checkpointer tries again');
    }
    return report;
  }
}

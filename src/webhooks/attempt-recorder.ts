import type { Logger } from 'pino';
import type { AttemptRecord, DeliveryQueue } from './delivery-queue.js';

/**
 * Finished attempts are written together, at most this long after the first of them. Most
 * ride along with the deliverer's next claim before that (one transaction for both); this is
 * for the last ones of a burst and for a quiet queue. Their deliveries stay leased until then,
 * so a crash in the meantime sends them again (same `webhook-id`). A transaction's commit is
 * most of what a record costs on SQLite: at 50 ms a burst was recorded about 50 attempts a
 * transaction, and half the transactions were records on their own (docs/benchmarks.md).
 */
const flushAfterMs = 200;
/** Attempts waiting this many are written at once, without waiting for a claim or the timer. */
const flushRows = 500;
const maxBackoffMs = 10_000;

/**
 * Writes finished attempts to the queue in batches: with the deliverer's next claim (`take`),
 * or on their own (DeliveryQueue.record) when no claim comes within a few tens of ms. When the
 * database cannot take them, they are kept and written again with backoff (a record is
 * idempotent): their deliveries stay leased meanwhile (the caller renews them until
 * `onRecorded`), and are due again as soon as the records land rather than when the leases
 * expire.
 */
export class AttemptRecorder {
  private pending: AttemptRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private backoffMs = 0;
  private writing: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly queue: DeliveryQueue,
    private readonly logger: Logger,
    /** Called with each batch once it is recorded. */
    private readonly onRecorded: (batch: AttemptRecord[]) => void,
  ) {}

  /** Queues a finished attempt; it is written with the next claim, or on its own within `flushAfterMs`. */
  add(record: AttemptRecord): void {
    this.pending.push(record);
    if (this.pending.length !== flushRows || this.stopped || this.backoffMs > 0) return this.soon(flushAfterMs);
    // Enough for a write of its own: now, not when the timer set by the first of them fires
    // (while writes fail, the backoff's timer stays).
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.soon(0);
  }

  /** Queues a finished attempt without scheduling a write (the caller flushes). */
  hold(record: AttemptRecord): void {
    this.pending.push(record);
  }

  /** Takes what is queued, to be written with a claim (`recorded` or `putBack` after). */
  take(): AttemptRecord[] {
    const batch = this.pending;
    this.pending = [];
    return batch;
  }

  /** A batch from `take` was written. */
  recorded(batch: AttemptRecord[]): void {
    if (batch.length > 0) this.onRecorded(batch);
  }

  /** A batch from `take` could not be written: it is queued again. */
  putBack(batch: AttemptRecord[]): void {
    if (batch.length === 0) return;
    this.pending = batch.concat(this.pending);
    this.soon(flushAfterMs);
  }

  /** No more scheduled writes; what is queued is written by a last `flush`. */
  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /** Writes what is queued so far in one transaction, after any write in progress; on failure it stays queued. */
  flush(): Promise<void> {
    this.writing = this.writing
      .catch(() => undefined)
      .then(async () => {
        const batch = this.pending;
        this.pending = [];
        if (batch.length === 0) return;
        try {
          await this.queue.record(batch);
        } catch (err) {
          this.pending = batch.concat(this.pending);
          throw err;
        }
        this.onRecorded(batch);
      });
    return this.writing;
  }

  private soon(delayMs: number): void {
    if (this.timer || this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.flush().then(
        () => {
          this.backoffMs = 0;
        },
        (err: unknown) => {
          this.backoffMs = Math.min(maxBackoffMs, Math.max(250, this.backoffMs * 2));
          this.logger.warn({ err: (err as Error).message, retryInMs: this.backoffMs }, 'could not record delivery attempts; retrying');
          this.soon(this.backoffMs);
        },
      );
    }, delayMs);
  }
}

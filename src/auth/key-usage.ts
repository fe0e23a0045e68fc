import type { Logger } from 'pino';
import { formatMicros, type Clock } from '../time/timestamps.js';

/**
 * When embedded keys were last used, kept to the minute without a database write per request
 * (docs/keys.md): a request only notes its key's id and minute in memory; `flush` writes what
 * changed, at most once a minute per key (a timer calls it every minute, and shutdown once
 * more). A key used in a minute already written is not written again.
 */
export class KeyUsage {
  /** Key id → the minute it was last used, not written yet. */
  private pending = new Map<string, string>();
  /** Key id → the minute last written (so a busy key is written once a minute, not per flush). */
  private readonly written = new Map<string, string>();
  private minuteMs = -1;
  private minute = '';

  constructor(
    private readonly clock: Clock,
    private readonly write: (uses: ReadonlyMap<string, string>) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  /** Notes a use of the key now (the hot path: a clock read and at most one map write). */
  used(keyId: string): void {
    const now = this.clock.now();
    const minuteMs = now - (now % 60_000);
    if (minuteMs !== this.minuteMs) {
      this.minuteMs = minuteMs;
      this.minute = formatMicros(minuteMs * 1000);
    }
    if (this.written.get(keyId) !== this.minute) this.pending.set(keyId, this.minute);
  }

  /** Writes the uses noted since the last flush; a failed write is kept for the next. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.write(batch);
      for (const [id, minute] of batch) this.written.set(id, minute);
      // Bounded: the ids of keys written in an earlier minute are forgotten.
      if (this.written.size > 100_000) this.written.clear();
    } catch (err) {
      for (const [id, minute] of batch) if (!this.pending.has(id)) this.pending.set(id, minute);
      this.logger.warn({ err: (err as Error).message, keys: batch.size }, 'last use of keys not written; retried at the next flush');
    }
  }
}

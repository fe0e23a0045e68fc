import type { LRUCache } from 'lru-cache';
import { boundedLru } from '../cache/bounded-lru.js';
import type { Clock } from '../time/timestamps.js';

/** How long one invalid record (area, resource, id, field) stays quiet after its warn line (docs/upstream.md). */
export const rejectedLogWindowMs = 10 * 60_000;
/** Invalid records told apart at once; past it, records not remembered are only counted. */
export const rejectedLogMaxRecords = 10_000;

export interface RejectedKey {
  area: string;
  resource: string;
  id: string | null;
  field: string;
}

/**
 * Which invalid upstream records get a `warn` line. The metric counts every occurrence; the log
 * names a record once per window, since an upstream that keeps sending the same bad record
 * would otherwise repeat its line every poll (100,000 bad devices: 100,000 lines an interval).
 * Bounded: at most `maxRecords` remembered, so a window logs at most that many records, plus
 * one line saying the rest were only counted.
 */
export class RejectedLog {
  /** Record → when its line was written. Read with peek only, so the oldest line is the least recently used entry. */
  private readonly logged: LRUCache<string, number>;
  private fullSince = -Infinity;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs = rejectedLogWindowMs,
    private readonly maxRecords = rejectedLogMaxRecords,
  ) {
    this.logged = boundedLru(maxRecords);
  }

  /**
   * `log`: write its line now; `quiet`: it had one within the window; `full`: as many other
   * records had theirs within the window, and forgetting one would log it twice.
   */
  decide(record: RejectedKey): 'log' | 'quiet' | 'full' {
    const key = JSON.stringify([record.area, record.resource, record.id, record.field]);
    const now = this.clock.now();
    const at = this.logged.peek(key);
    if (at !== undefined && now - at < this.windowMs) return 'quiet';
    if (at === undefined && this.logged.size >= this.maxRecords) {
      const oldest = this.logged.rvalues().next().value;
      if (oldest !== undefined && now - oldest < this.windowMs) return 'full';
    }
    this.logged.set(key, now);
    return 'log';
  }

  /** Whether the one line about records left unlogged is due (once per window). */
  fullLineDue(): boolean {
    const now = this.clock.now();
    if (now - this.fullSince < this.windowMs) return false;
    this.fullSince = now;
    return true;
  }
}

import { LRUCache } from 'lru-cache';
import type { Clock } from '../time/timestamps.js';

interface Window {
  start: number;
  failures: number;
}

/**
 * Counts failed key attempts per client in fixed one-minute windows (CONTRACT 2: 20 a
 * minute). Once a client reaches the limit, every keyed request from it is refused until its
 * window ends. Bounded: the least recently seen clients are forgotten first.
 */
export class FailedAttempts {
  private readonly windows: LRUCache<string, Window>;

  constructor(
    private readonly clock: Clock,
    private readonly limit = 20,
    private readonly windowMs = 60_000,
    maxClients = 50_000,
  ) {
    this.windows = new LRUCache({ max: maxClients });
  }

  /** Seconds until the client may try again, or 0 when it is not blocked. */
  retryAfterSeconds(client: string): number {
    const window = this.current(client);
    if (!window || window.failures < this.limit) return 0;
    return Math.max(1, Math.ceil((window.start + this.windowMs - this.clock.now()) / 1000));
  }

  recordFailure(client: string): void {
    const window = this.current(client);
    if (window) window.failures += 1;
    else this.windows.set(client, { start: this.clock.now(), failures: 1 });
  }

  private current(client: string): Window | undefined {
    const window = this.windows.get(client);
    if (window && this.clock.now() - window.start >= this.windowMs) {
      this.windows.delete(client);
      return undefined;
    }
    return window;
  }
}

import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/** Event loop utilisation past which the process counts as short of CPU. */
const busyShare = 0.9;
/** How long a utilisation reading holds before it is read again (ms). */
const sampleMs = 250;
/** How long the last started poll's lateness stands for the poller's (ms): no poll since, no lag. */
const lagFreshMs = 1_000;

/**
 * Whether the poller is behind its schedule because the process is short of CPU (docs/webhooks.md,
 * "When the poller is behind"). One event loop runs both the poller and the deliverer; in a mass
 * outage on a machine shared with other work, the deliverer's thousands of sends took the CPU
 * that the polls needed, and keys went unpolled for longer than 1.5 intervals: a late poll can
 * miss a change altogether (a screen offline and back between two polls), while a late delivery
 * only arrives later. So while this says so, the deliverer sends one delivery at a time.
 *
 * Behind means both: a background poll started more than `lagMs` after its key was due within
 * the last second, and the event loop was busy more than 90 % of the last quarter second (a
 * poller that is behind because the upstream is slow, with CPU to spare, does not slow the
 * deliveries). Read lazily, no timer: a utilisation reading is taken at most every 250 ms.
 */
export class PollPressure {
  private lag = 0;
  private lagAt = -Infinity;
  private mark: EventLoopUtilization = performance.eventLoopUtilization();
  private markAt = performance.now();
  private busy = false;

  /** `lagMs`: how late a background poll may start before the poller counts as behind. */
  constructor(private readonly lagMs: number) {}

  /** A background poll started `lagMs` after its key was due. */
  pollStarted(lagMs: number): void {
    this.lag = lagMs;
    this.lagAt = performance.now();
  }

  /** Whether the poller is behind on a busy event loop. */
  get behind(): boolean {
    const now = performance.now();
    if (this.lag <= this.lagMs || now - this.lagAt > lagFreshMs) return false;
    if (now - this.markAt >= sampleMs) {
      const current = performance.eventLoopUtilization();
      this.busy = performance.eventLoopUtilization(current, this.mark).utilization > busyShare;
      this.mark = current;
      this.markAt = now;
    }
    return this.busy;
  }
}

import type { Logger } from 'pino';
import { RejectedLog } from '../upstream/rejected-log.js';
import { formatMicros, type Clock } from '../time/timestamps.js';

/**
 * The warn lines about transitions decided from a heartbeat in the future (a device's or an
 * upstream's clock ahead of the connector's): each names the device and the heartbeat, and is
 * rate-limited like the lines about invalid upstream records (once per device per window), so
 * a device stuck an hour ahead does not log at every poll (docs/triggers.md).
 */
export class FutureHeartbeatLog {
  private readonly limiter: RejectedLog;

  constructor(
    private readonly logger: Logger,
    clock: Clock,
  ) {
    this.limiter = new RejectedLog(clock);
  }

  report(future: ReadonlyArray<{ id: string; heartbeat: string }>, pollAtMs: number): void {
    for (const { id, heartbeat } of future) {
      const verdict = this.limiter.decide({ area: 'device', resource: 'device', id, field: 'last_heartbeat_at' });
      if (verdict === 'log') {
        this.logger.warn(
          { deviceId: id, heartbeat, takenAs: formatMicros(pollAtMs * 1000) },
          "device heartbeat in the future; the event is dated at the poll's time",
        );
      }
    }
  }
}

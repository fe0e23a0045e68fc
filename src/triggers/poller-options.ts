import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { DeviceSource } from '../sources/types.js';
import type { Clock } from '../time/timestamps.js';
import type { Metrics } from '../metrics/metrics.js';
import type { EventLog } from './event-log.js';
import type { SnapshotStore } from './snapshots.js';
import type { DeviceEvent } from './transitions.js';
import type { WatchStore } from './watches.js';
import type { PollPressure } from '../background/poll-pressure.js';

/**
 * How often an idle poller looks for due keys (a quarter of the interval, at most 250 ms): a key
 * waits at most this long past its time. Looked for once a second, the keys due within that
 * second were polled together, each up to a second late, and a key that had waited a second
 * before a mass outage began was the one whose gap ran over 1.5 intervals (docs/benchmarks.md).
 * A look is one claim statement that finds the due keys by their index.
 */
export function pollTickMs(intervalMs: number): number {
  return Math.min(250, Math.max(50, Math.floor(intervalMs / 4)));
}

/** What the device-status poller (poller.ts) is built from. */
export interface PollerOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** The uncached device source (embedded database or upstream). */
  devices: DeviceSource;
  watches: WatchStore;
  log: EventLog;
  snapshots: SnapshotStore;
  heartbeatTimeoutMs: number;
  intervalMs: number;
  /** How long a claimed key stays this replica's: longer than one poll can take. */
  leaseMs: number;
  /** Keys polled at once by this replica. */
  concurrency?: number;
  /** Called after a poll enqueued deliveries, so they go out without waiting. */
  onEvents?: (events: DeviceEvent[]) => void;
  metrics?: Metrics;
  /** Told how late each background poll of the started loop starts (the deliverer yields while the poller is behind). */
  pressure?: Pick<PollPressure, 'pollStarted'>;
}

export interface PollResult {
  keys: number;
  events: number;
  failed: number;
}

import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { AppError } from '../errors.js';
import { allDevices } from '../options/resources.js';
import type { DeviceSource, Principal } from '../sources/types.js';
import type { Clock } from '../time/timestamps.js';
import type { EventLog } from './event-log.js';
import { detectTransitions, type DeviceEvent } from './transitions.js';
import type { Watch, WatchStore } from './watches.js';

export interface PollerOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  /** The uncached device source (embedded database or upstream). */
  devices: DeviceSource;
  watches: WatchStore;
  log: EventLog;
  heartbeatTimeoutMs: number;
  intervalMs: number;
  /** Keys polled at once. */
  concurrency?: number;
  /** Called after a poll enqueued deliveries, so they go out without waiting. */
  onEvents?: (events: DeviceEvent[]) => void;
}

export interface PollResult {
  keys: number;
  events: number;
  failed: number;
}

/**
 * The device-status poller (CONTRACT 6.3). Each round polls every watched key, a few at a
 * time; the first poll of a key records a baseline and emits nothing; then the pure diff
 * against the stored snapshot yields events, written with the snapshot and their deliveries
 * in one transaction. An upstream that rejects a key (401/403) pauses that key's watch; other
 * failures skip the key for this round.
 */
export class DeviceStatusPoller {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<PollResult> | null = null;
  private stopped = false;

  constructor(private readonly options: PollerOptions) {}

  start(): void {
    this.stopped = false;
    // Rounds start every intervalMs (not intervalMs after the previous round ended), so a
    // change waits at most one interval to be seen.
    const tick = async () => {
      const started = Date.now();
      await this.pollOnce().catch((err: unknown) => this.options.logger.error({ err }, 'poll round failed'));
      if (!this.stopped) this.timer = setTimeout(tick, Math.max(0, this.options.intervalMs - (Date.now() - started)));
    };
    this.timer = setTimeout(tick, Math.min(this.options.intervalMs, 1000));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** One round over every due watch; concurrent calls share the round in progress. */
  pollOnce(): Promise<PollResult> {
    this.running ??= this.round().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async round(): Promise<PollResult> {
    const due = this.options.watches.due();
    const result: PollResult = { keys: due.length, events: 0, failed: 0 };
    const queue = [...due];
    const worker = async () => {
      for (let watch = queue.shift(); watch; watch = queue.shift()) {
        try {
          result.events += (await this.pollKey(watch)).length;
        } catch {
          result.failed += 1;
        }
      }
    };
    await Promise.all(Array.from({ length: this.options.concurrency ?? 4 }, worker));
    this.options.log.prune();
    return result;
  }

  /**
   * Polls one key and records what changed. Throws the source's error after pausing the
   * watch when the key itself was refused. `requestId`: the incoming request this poll is made
   * for (enrolment), forwarded as X-Request-Id; background rounds mint their own.
   */
  async pollKey(watch: Watch, requestId?: string): Promise<DeviceEvent[]> {
    const { clock, log, logger } = this.options;
    let devices;
    try {
      devices = await allDevices(this.options.devices, this.principal(watch, requestId));
    } catch (err) {
      if (err instanceof AppError && (err.code === 'invalid_key' || err.code === 'invalid_scopes')) {
        const who = this.options.devices.mode === 'upstream' ? 'Upstream rejected the key' : 'Key refused';
        const reason = `${who}: ${err.message}`;
        this.options.watches.pause(watch.key_hash, reason);
        logger.warn({ key: `${watch.key_hash.slice(0, 8)}…`, reason }, 'watch paused');
      } else {
        logger.warn({ key: `${watch.key_hash.slice(0, 8)}…`, err: (err as Error).message }, 'poll failed; will retry next round');
      }
      throw err;
    }
    const previous = log.snapshot(watch.key_hash);
    const baseline = watch.baseline_at === null;
    const { events, snapshot } = detectTransitions(previous, devices, this.options.heartbeatTimeoutMs, clock.now());
    const fresh = log.record(watch.key_hash, previous, snapshot, baseline ? [] : events, baseline);
    if (fresh.length > 0) this.options.onEvents?.(fresh);
    return fresh;
  }

  private principal(watch: Watch, requestId?: string): Principal {
    if (this.options.devices.mode === 'embedded') {
      const key = this.options.db
        .prepare('SELECT k.user_id, k.scopes FROM api_keys k WHERE k.key_sha256 = ?')
        .get(watch.key_hash) as { user_id: string; scopes: string } | undefined;
      if (!key) throw new AppError('invalid_key', 'The key no longer exists');
      if (!(JSON.parse(key.scopes) as string[]).includes('device:read')) throw new AppError('invalid_scopes', 'Invalid scopes');
      return { keyHash: watch.key_hash, key: '', scopes: null, keyId: null, keyName: null, userId: key.user_id, accountId: null, accountName: null };
    }
    return {
      keyHash: watch.key_hash,
      key: this.options.watches.key(watch),
      scopes: null,
      keyId: null,
      keyName: null,
      userId: null,
      accountId: null,
      accountName: null,
      requestId: requestId ?? `poll-${randomUUID()}`,
    };
  }
}

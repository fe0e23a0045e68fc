import { AppError } from '../errors.js';
import { devicePageSize } from '../sources/all-devices.js';
import type { DeviceState } from '../catalog/device.js';
import type { PollerOptions } from './poller-options.js';
import { LeaseLostError } from './event-log.js';
import type { FutureHeartbeatLog } from './future-heartbeats.js';
import { pollPrincipal } from './poll-principal.js';
import { baselineSliceRows, completeDevices, PollComparison } from './poll-comparison.js';
import type { DeviceEvent } from './transitions.js';
import type { Watch } from './watches.js';

export type PollKeyDeps = PollerOptions & { futureHeartbeats: FutureHeartbeatLog };

/** The least time between two polls of a key, as a share of the interval (`nextPollTime`). */
export const minPollGapShare = 0.95;

/**
 * The most time between two polls of a key that the schedule chooses, as a share of the interval, while it moves a key to its
 * slot: 0.35 intervals of the 1.5 allowed are left for that next poll to start late. With 1.3, the keys of a catch-up whose slots
 * were further moved together to 1.3 intervals, and a poller 2 s late there (a mass outage starting) made them all late gaps
 * (docs/benchmarks.md, many accounts on PostgreSQL).
 */
export const maxPollGapShare = 1.15;

/**
 * A key's slot: where in the interval its polls belong, in milliseconds past a multiple of the
 * interval (from its hash, so every replica agrees). Keys' slots are spread evenly over the
 * interval, as Prometheus spreads its scrape targets: however the keys fell due (all at once
 * after a restart, a database outage or a mass outage's slow polls), the schedule brings each
 * back to its slot, and the poller is asked for as many polls in every second of the interval.
 */
export function pollSlot(keyHash: string, intervalMs: number): number {
  return Number.parseInt(keyHash.slice(0, 12), 16) % intervalMs;
}

/**
 * A key's next poll time (docs/triggers.md). A background poll keeps the key's place: its
 * next poll is an interval after it was `due`, not after it ran, so a poll that started late
 * (a busy replica, many keys due at once, a claim a tick late) does not push every later poll
 * of the key back by as much, which under a sustained load made each gap an interval plus the
 * wait. Never sooner than `minPollGapShare` of an interval after `askedAt`, when this poll's
 * source answered its first page (after the attempts an upstream call retried, if any), so
 * two polls of a key reach the source at least 0.95 intervals apart.
 *
 * With its `slot` (pollSlot), a background poll off its slot moves the key towards it: back to
 * it when it is that close behind (a poll that ran a little late), else forward, at most to
 * `maxPollGapShare` of an interval after the source was asked, so a key that fell due with
 * every other (a catch-up) is on its slot within a few polls, no gap longer than 1.15 intervals
 * meanwhile. A key on its slot stays there. Without `due` (a request's own poll, a baseline)
 * an interval after the source was asked.
 */
export function nextPollTime(intervalMs: number, askedAt: number, due?: number, slot?: number): number {
  if (due === undefined) return askedAt + intervalMs;
  const soonest = askedAt + Math.ceil(minPollGapShare * intervalMs);
  const kept = Math.max(due + intervalMs, soonest);
  if (slot === undefined) return kept;
  const behind = (((kept - slot) % intervalMs) + intervalMs) % intervalMs; // kept is this far past its slot
  if (behind === 0) return kept;
  const ahead = intervalMs - behind;
  // Back to the slot when the least gap allows it; towards it when that is the quicker way
  // (back a poll moves at most 0.05 intervals, forward up to 0.2); else forward.
  if (kept - behind >= soonest || 5 * behind <= ahead) return Math.max(kept - behind, soonest);
  return Math.max(kept, Math.min(kept + ahead, askedAt + Math.floor(maxPollGapShare * intervalMs)));
}

export interface PollKeyOptions {
  /** The incoming request this poll is made for (enrolment), forwarded as X-Request-Id; background polls mint their own. */
  requestId?: string;
  /** The poll lease it runs under: its record (and a baseline's slices) are written only while it holds. */
  owner: string;
  /** When the poll started. */
  started: number;
  /** A background poll's: when the key was due (its poll time at the claim); the key's next poll is an interval after it (`nextPollTime`). */
  due?: number;
  /** Stops the poll at its next page, unrecorded. */
  stop: AbortSignal;
}

/**
 * Polls one key under a lease (`owner`, this replica's by default) and records what changed.
 * Throws the source's error after pausing the watch when the key itself was refused, and
 * LeaseLostError, writing nothing, when the lease is no longer `owner`'s. `requestId`: the
 * incoming request this poll is made for (enrolment), forwarded as X-Request-Id; background
 * polls mint their own, and only they are stopped by `stop`.
 */
export async function pollKey(deps: PollKeyDeps, watch: Watch, { requestId, owner, started, due, stop }: PollKeyOptions): Promise<DeviceEvent[]> {
  const { clock, log, logger } = deps;
  const key = `${watch.key_hash.slice(0, 8)}…`;
  const baseline = watch.baseline_at === null;
  // Page by page (keyset pages on the embedded store, pages as they arrive upstream), each
  // compared with the snapshot rows of its own devices: a poll holds one page, what changed
  // and the ids it saw, never a key's whole device list or snapshot (PollComparison).
  // A small key's listing with the digest of its snapshot changed nothing: no snapshot row is read.
  const digest = baseline ? null : watch.snapshot_digest;
  const comparison = new PollComparison<DeviceState>(deps.snapshots, watch.key_hash, deps.heartbeatTimeoutMs, owner, digest);
  let events: DeviceEvent[] = [];
  let vanished: string[];
  let askedAt: number;
  // When the source answered the first page: the attempt that read it, which comes after
  // `askedAt` by as long as the attempts before it took (a timeout, a 5xx) and their backoff.
  let readAt: number | undefined;
  try {
    const principal = { ...(await pollPrincipal(deps, watch, requestId)), signal: stop };
    const source = deps.devices;
    // Where the source can, a poll compares ids and heartbeats only and reads the whole
    // records of the devices that changed afterwards (completeDevices).
    const lean = source.statePages && source.byIds ? { states: source.statePages.bind(source), byIds: source.byIds.bind(source) } : null;
    const pages = lean ? lean.states(principal, devicePageSize) : source.pages(principal, devicePageSize);
    askedAt = clock.now();
    for await (const page of pages) {
      stop.throwIfAborted();
      readAt ??= clock.now();
      await comparison.add(page, clock.now());
      // A baseline emits nothing, so its snapshot may land in slices (docs/triggers.md).
      if (baseline && comparison.pendingRows >= baselineSliceRows) await comparison.flush();
    }
    stop.throwIfAborted();
    vanished = await comparison.vanished();
    deps.futureHeartbeats.report(comparison.future, askedAt);
    if (!baseline) events = lean ? await completeDevices(lean.byIds, principal, comparison.events) : (comparison.events as DeviceEvent[]);
    stop.throwIfAborted();
  } catch (err) {
    if (stop.aborted) throw err; // not the upstream's failure: nothing paused, logged or written
    if (err instanceof LeaseLostError) {
      // A baseline's slice found the key taken over: this poll outlived its lease.
      logger.warn({ key }, 'poll outlived its lease; another replica has the key');
      throw err;
    }
    if (err instanceof AppError && (err.code === 'invalid_key' || err.code === 'invalid_scopes')) {
      const who = deps.devices.mode === 'upstream' ? 'Upstream rejected the key' : 'Key refused';
      const reason = `${who}: ${err.message}`;
      await deps.watches.pause(watch.key_hash, reason);
      logger.warn({ key, reason }, 'watch paused');
    } else {
      logger.warn(
        { key, err: (err as Error).message, ...(err instanceof AppError && err.details ? { details: err.details } : {}) },
        'poll failed; will retry next interval',
      );
    }
    throw err;
  }
  try {
    const changes = { written: comparison.rowsWritten, changed: comparison.takeChanged(), vanished, digest: comparison.digestChange };
    const fresh = await log.record(watch.key_hash, changes, events, baseline, {
      owner,
      // The least gap counts from the attempt that read the source, not from the first one:
      // after a retried first page, counted from the first attempt, the next poll reached the
      // source a few hundred milliseconds after this one's retry (test/replicas, under load).
      nextPollAt: nextPollTime(deps.intervalMs, Math.max(started, readAt ?? askedAt), due, pollSlot(watch.key_hash, deps.intervalMs)),
    });
    if (fresh.length > 0) deps.onEvents?.(fresh);
    return fresh;
  } catch (err) {
    if (err instanceof LeaseLostError) logger.warn({ key }, 'poll outlived its lease; another replica has the key');
    // Nothing was written: the next poll sees the same changes and records them then.
    else logger.error({ key, changes: events.length, err: (err as Error).message }, 'could not record the poll; its changes are recorded by the next one');
    throw err;
  }
}

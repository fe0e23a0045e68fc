import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { AppError } from '../errors.js';
import { pollTickMs, type PollerOptions, type PollResult } from './poller-options.js';
import { ClaimLoop } from '../background/claim-loop.js';
import { LeaseLostError } from './event-log.js';
import type { DeviceEvent } from './transitions.js';
import type { RequestLease, Watch } from './watches.js';
import { FutureHeartbeatLog } from './future-heartbeats.js';
import { PollQueue } from './poll-queue.js';
import { nextPollTime, pollKey } from './poll-key.js';

const maxBackoffMs = 10_000;
/** Slots freed within this many milliseconds are refilled by one claim. */
const coalesceMs = 5;

/** A `runUntilIdle` under way. */
interface IdleRun {
  /** What a poll that ends with few keys left wakes, instead of the started loop. */
  wake: () => void;
  done: Promise<PollResult>;
}

/**
 * The device-status poller (docs/triggers.md). Every replica runs one; they share the work
 * through the watches' leases: a replica claims the keys that are due, polls each (the first
 * poll of a key records a baseline and emits nothing; later ones diff against the stored
 * snapshot), and records snapshot, events, deliveries and the key's next poll time in one
 * transaction. A replica that dies leaves its leases to expire, and the keys are claimed by
 * another within one interval plus the lease. An upstream that rejects a key (401/403) pauses
 * its watch; other failures retry the key at its next interval. A database that is down makes
 * the loop back off, never exit.
 */
export class DeviceStatusPoller {
  private readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  private readonly loop: ClaimLoop;
  /** Background polls under way, and the keys claimed for the next ones. */
  private polling = 0;
  private readonly queue = new PollQueue();
  /** A `runUntilIdle` under way: what a poll that ends wakes instead of the loop's timer. */
  private idleRun: IdleRun | null = null;
  /** Keys being polled under this replica's lease: renewed while their polls run. */
  private readonly leased = new Set<string>();
  /** Aborted by `stop`: polls under a lease end at their next page, upstream calls at once. */
  private stopping = new AbortController();
  /** Requests' own polls under way, and their stop: at the end of the requests' grace period. */
  private readonly requestPolls = new Set<Promise<unknown>>();
  private requestsStopping = new AbortController();
  private readonly futureHeartbeats: FutureHeartbeatLog;

  constructor(private readonly options: PollerOptions) {
    this.futureHeartbeats = new FutureHeartbeatLog(options.logger, options.clock);
    this.loop = new ClaimLoop({
      name: 'poller',
      logger: options.logger,
      round: () => this.claimDue().then(() => false),
      firstRoundMs: Math.min(options.intervalMs, 1000),
      idleMs: this.tickMs,
      coalesceMs,
      minBackoffMs: this.tickMs,
      maxBackoffMs,
      // A poll of a very big key may outlast one lease: its lease is renewed while it runs,
      // so no other replica takes the key meanwhile.
      renew: {
        everyMs: Math.max(1000, Math.floor(options.leaseMs / 3)),
        run: () => this.renew(),
      },
    });
  }

  private get concurrency(): number {
    return this.options.concurrency ?? 32;
  }

  /** How often the loop looks for due keys: a key waits at most this long past its time. */
  private get tickMs(): number {
    return pollTickMs(this.options.intervalMs);
  }

  start(): void {
    this.stopping = new AbortController();
    this.requestsStopping = new AbortController();
    this.loop.start();
  }

  /**
   * Stops claiming; the polls under way (a `runUntilIdle` too) end at their next page, unrecorded.
   * A request's own poll gets `requestGraceMs` (the requests' grace period) to finish, then it
   * is stopped the same way, so nothing polls when the database closes.
   */
  async stop(requestGraceMs = 0): Promise<void> {
    this.stopping.abort();
    await this.loop.stop();
    // Claimed and never started: handed back due at once.
    for (const { watch, done } of this.queue.drain()) {
      await this.options.watches.release(watch.key_hash, this.owner, this.options.clock.now()).catch(() => undefined);
      this.leased.delete(watch.key_hash);
      done(null);
    }
    if (this.requestPolls.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.requestPolls]), new Promise((resolve) => (timer = setTimeout(resolve, requestGraceMs)))]);
    clearTimeout(timer);
    this.requestsStopping.abort();
    await Promise.allSettled([...this.requestPolls]);
  }

  /**
   * Claims due keys for the free slots and one slot-round ahead (one claim for many keys), and
   * starts polling them; claims nothing while a slot-round of keys is already waiting. Returns
   * the round it started, done with what its keys came to once their polls are (null when it
   * claimed none).
   */
  private async claimDue(): Promise<{ done: Promise<PollResult> } | null> {
    if (this.lowOnKeys === false || this.stopping.signal.aborted) return null;
    const want = 2 * this.concurrency - this.polling - this.queue.length;
    const started = performance.now();
    const at = this.options.clock.now();
    const claimed = await this.options.watches.claim(this.owner, { limit: want, leaseMs: this.options.leaseMs });
    // Renewed from the claim on: a key may wait in the queue for a while behind slow polls.
    for (const watch of claimed) this.leased.add(watch.key_hash);
    const polls = claimed.map((watch) => this.queue.push(watch, at + this.options.leaseMs));
    this.startQueued();
    if (polls.length === 0) return null;
    // A round, for metrics: the keys one claim took, done when their polls are.
    const done = Promise.all(polls).then((outcomes) => {
      const round: PollResult = { keys: outcomes.length, events: 0, failed: 0 };
      for (const outcome of outcomes) {
        if (outcome === null) round.failed += 1;
        else round.events += outcome;
      }
      this.options.metrics?.pollRound({ durationMs: performance.now() - started, keys: round.keys, failed: round.failed });
      return round;
    });
    return { done };
  }

  /** Half a slot-round or less waits: time to claim (at least half a slot-round of keys). */
  private get lowOnKeys(): boolean {
    return this.polling + this.queue.length <= 1.5 * this.concurrency;
  }

  /** Starts waiting keys while slots are free (never once stopping). */
  private startQueued(): void {
    while (this.polling < this.concurrency && !this.stopping.signal.aborted) {
      const next = this.queue.take(this.options.clock.now(), this.letGo);
      if (!next) return;
      void this.pollInBackground(next.watch).then(next.done);
    }
  }

  /** Renews the leases held; a key lost meanwhile (another replica took it) is let go, unpolled if it waits. */
  private async renew(): Promise<void> {
    const keys = [...this.leased];
    const at = this.options.clock.now();
    const kept = new Set(await this.options.watches.renew(this.owner, keys, this.options.leaseMs));
    this.queue.renewed(keys, kept, at + this.options.leaseMs, this.letGo);
  }

  private readonly letGo = (watch: Watch) => this.leased.delete(watch.key_hash);

  private pollInBackground(watch: Watch): Promise<number | null> {
    this.polling += 1;
    // The started loop's lateness (runUntilIdle's clock is a test's or a bench's, not the wall's).
    if (!this.idleRun) this.options.pressure?.pollStarted(this.options.clock.now() - watch.next_poll_at);
    return this.loop.track(
      this.pollClaimed(watch).finally(() => {
        this.polling -= 1;
        this.startQueued();
        // Keys may be due: claim again soon (completions within a few ms share one claim), or
        // right after the claim under way, once the queue runs low.
        if (this.lowOnKeys) this.wake();
      }),
    );
  }

  private wake(): void {
    if (this.idleRun) this.idleRun.wake();
    else this.loop.wake(coalesceMs);
  }

  /**
   * Runs the background loop's rounds, without its timers, until it is idle: no key due and no
   * poll under way. The same claims of due keys under a lease, the same queue and concurrency
   * as when started; where the started loop waits for a timer, this claims at once. With an
   * injected clock (tests, benches), it polls the keys due at that clock once each. Only while
   * the poller is not started; concurrent calls share the run under way. Resolves with what the
   * keys claimed came to: `failed` counts the polls that failed (and keys handed back at a stop).
   */
  runUntilIdle(): Promise<PollResult> {
    if (!this.loop.isStopped) return Promise.reject(new Error('runUntilIdle drives a poller that is not started'));
    if (!this.idleRun) {
      const run: IdleRun = { wake: () => undefined, done: Promise.resolve({ keys: 0, events: 0, failed: 0 }) };
      this.idleRun = run;
      run.done = this.runRounds(run).finally(() => {
        this.idleRun = null;
      });
    }
    return this.idleRun.done;
  }

  private async runRounds(run: IdleRun): Promise<PollResult> {
    const result: PollResult = { keys: 0, events: 0, failed: 0 };
    const rounds: Promise<void>[] = [];
    for (;;) {
      // A poll that ends during the claim wakes the next round at once, as in the started loop.
      const woken = new Promise<void>((resolve) => (run.wake = resolve));
      const round = await this.claimDue();
      if (round) {
        rounds.push(
          round.done.then((r) => {
            result.keys += r.keys;
            result.events += r.events;
            result.failed += r.failed;
          }),
        );
      }
      if (this.polling + this.queue.length === 0) break;
      await woken;
    }
    await Promise.all(rounds);
    return result;
  }

  /** Polls a key this replica leased; returns the number of new events, or null when it failed. */
  private async pollClaimed(watch: Watch): Promise<number | null> {
    return (await this.pollLeased(watch).catch(() => null))?.length ?? null;
  }

  /** The lease a request takes at enrolment (`WatchStore.enrol`) for its own poll of the key. */
  get requestLease(): RequestLease {
    return { owner: this.owner, leaseMs: this.options.leaseMs };
  }

  /**
   * A request's own poll of a key it leased at enrolment (a baseline, or the re-check of a
   * paused key), with its X-Request-Id. No background poll runs beside it; a shutdown stops it
   * only when the requests' grace period ends.
   */
  pollForRequest(watch: Watch, requestId: string): Promise<DeviceEvent[]> {
    const poll = this.pollLeased(watch, requestId).catch((err: unknown) => {
      if (this.requestsStopping.signal.aborted) throw new AppError('shutting_down', 'Service shutting down', undefined, { 'Retry-After': '5' });
      throw err;
    });
    const tracked = poll.catch(() => undefined).finally(() => this.requestPolls.delete(tracked));
    this.requestPolls.add(tracked);
    return poll;
  }

  /** What stops a poll: the background's stop, or for a request's own poll the requests'. */
  private stopOf(requestId: string | undefined): AbortSignal {
    return (requestId === undefined ? this.stopping : this.requestsStopping).signal;
  }

  /**
   * Polls a key under this replica's lease, renewed while the poll runs. A failed background
   * poll lets the lease go, the key due again an interval after the poll started but at least
   * 0.95 intervals after it failed (nextPollTime: a poll whose attempts all timed out can
   * outlast an interval, and due again at once it was polled right after its last attempt);
   * a stopped one records nothing
   * and hands the key back due at once, so another replica (or the next start) polls it now, as
   * if this poll had never started; so does a request's own poll that failed (the background
   * poller tries it next, as it would have without the request).
   */
  private async pollLeased(watch: Watch, requestId?: string): Promise<DeviceEvent[]> {
    const started = this.options.clock.now();
    this.leased.add(watch.key_hash);
    try {
      // A background poll keeps the key's place in the interval (poll-key.ts, nextPollTime).
      return await this.pollKey(watch, { requestId, started, due: requestId === undefined ? watch.next_poll_at : undefined });
    } catch (err) {
      const dueNow = requestId !== undefined || this.stopOf(requestId).aborted;
      if (!(err instanceof LeaseLostError)) {
        const nextPollAt = dueNow ? started : nextPollTime(this.options.intervalMs, this.options.clock.now(), started);
        await this.options.watches.release(watch.key_hash, this.owner, nextPollAt).catch(() => undefined);
      }
      throw err;
    } finally {
      this.leased.delete(watch.key_hash);
    }
  }

  /**
   * Polls one key under a lease (`owner`, this replica's by default) and records what changed
   * (poll-key.ts). `requestId`: the incoming request this poll is made for (enrolment); only
   * background polls are stopped by `stop`.
   */
  pollKey(
    watch: Watch,
    { requestId, owner = this.owner, started = this.options.clock.now(), due }: { requestId?: string; owner?: string; started?: number; due?: number } = {},
  ): Promise<DeviceEvent[]> {
    return pollKey({ ...this.options, futureHeartbeats: this.futureHeartbeats }, watch, { requestId, owner, started, due, stop: this.stopOf(requestId) });
  }
}

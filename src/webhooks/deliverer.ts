import { ClaimLoop } from '../background/claim-loop.js';
import type { ClaimResult, Due } from './delivery-queue.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { DeliveryAttempts } from './delivery-attempt.js';
import { OriginLane } from './origin-lane.js';
import { coalesceMs, lookahead, maxBackoffMs, maxClaim, renewalsPerLease, type DelivererOptions } from './deliverer-options.js';

export type { DelivererOptions };

/** Lanes kept at most; past this, idle lanes are forgotten with what they learnt. */
const maxLanes = 10_000;

/** What one claim round did. */
interface Round {
  /** Claim again at once. */
  more: boolean;
  /** It claimed nothing and recorded nothing. */
  quiet: boolean;
}

/**
 * The webhook delivery engine. Its queue is the `deliveries` table (DeliveryQueue), so a
 * restart or crash loses nothing: a delivery is leased while in flight, and a lease that
 * outlives its process expires and the delivery is sent again (at-least-once, same
 * `webhook-id`). What an attempt's answer means is the retry policy's (retry-policy.ts).
 *
 * It is a claim loop (background/claim-loop.ts) and a lane per target origin (origin-lane.ts),
 * which holds all that origin's state: it claims due deliveries a few rounds ahead per origin,
 * sends from each lane as that origin's slots free up, and tops the lanes up in the background;
 * an origin whose lane is full is skipped by the claim. Finished attempts are recorded in small
 * batches (attempt-recorder.ts), mostly with the next claim.
 */
export class WebhookDeliverer {
  private readonly loop: ClaimLoop;
  private readonly recorder: AttemptRecorder;
  private readonly attempts: DeliveryAttempts;
  /** Per target origin, everything held for it; a lane that holds nothing and learnt nothing is dropped. */
  private readonly lanes = new Map<string, OriginLane>();
  /** Attempts made since the deliverer was built (`drain` counts its own with it). */
  private sent = 0;
  /** `drain` calls waiting for the loop to find nothing to do. */
  private idleWaiters: Array<() => void> = [];
  /** Sends in flight, every lane together. */
  private inFlight = 0;
  /** Lanes that could have sent while the deliverer yielded (`yieldTo`), in turn for the one slot. */
  private readonly heldBack = new Set<OriginLane>();

  constructor(private readonly options: DelivererOptions) {
    this.attempts = new DeliveryAttempts(options);
    this.recorder = new AttemptRecorder(options.queue, options.logger, (batch) => {
      // Recorded: the lease is over (kept renewed until here, so a slow record loses nothing).
      for (const r of batch) {
        const lane = this.lanes.get(r.delivery.target_origin);
        lane?.recorded(r.delivery);
        if (lane) this.forgetIfDone(lane);
      }
    });
    this.loop = new ClaimLoop({
      name: 'deliverer',
      logger: options.logger,
      round: () => this.round(),
      firstRoundMs: 0,
      idleMs: options.idleCheckMs ?? 1000,
      coalesceMs,
      minBackoffMs: 250,
      maxBackoffMs,
      renew: { everyMs: Math.max(50, Math.floor(this.leaseMs / renewalsPerLease)), run: () => this.renew() },
    });
  }

  /** Deliveries claimed and not yet finished, in all. */
  private get maxHeld(): number {
    return this.options.maxHeld ?? 1000;
  }

  /**
   * A claim's lease covers one send and its record (2 × WEBHOOK_TIMEOUT_MS + 5 s) and is
   * renewed while the delivery waits in its lane, is in flight or waits for its record, so a replica that dies
   * leaves its deliveries due again within that, however far ahead it had claimed.
   */
  private get leaseMs(): number {
    return 2 * this.options.timeoutMs + 5000;
  }

  start(): void {
    this.loop.start();
  }

  /**
   * Runs the claim loop until it finds nothing to do: nothing due by the deliverer's clock,
   * nothing in flight, every attempt recorded. Returns how many attempts were made meanwhile.
   * When the loop is not running (tests, tools) it is started for the while and stopped after,
   * so they drive the loop, the lanes and the recorder that run in production, at their own clock.
   */
  async drain(): Promise<number> {
    const before = this.sent;
    const idle = new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const owned = this.loop.isStopped;
    if (owned) this.loop.start();
    else this.loop.wake(0);
    await idle;
    if (owned) await this.loop.stop();
    return this.sent - before;
  }

  /**
   * Renews the leases held; a delivery whose lease was lost (it ran out while the database was
   * away and another replica claimed it, or it was cancelled) is dropped from its lane unsent.
   */
  private async renew(): Promise<void> {
    const held = [...this.lanes.values()].flatMap((lane) => [...lane.leased]);
    if (held.length === 0) return;
    const kept = await this.options.queue.renew(held, this.leaseMs);
    if (kept.length === held.length) return;
    const keep = new Set(kept);
    const lost = new Set(held.filter((d) => !keep.has(d)));
    for (const lane of [...this.lanes.values()]) {
      lane.lose(lost);
      this.forgetIfDone(lane);
    }
  }

  /**
   * Stops claiming and sending; hands back at once what was claimed and not sent, lets the
   * deliveries in flight finish (each within its timeout) and records them. A delivery whose
   * send or record the process does not live to finish stays leased and is sent again, with
   * the same webhook-id, when its lease runs out.
   */
  async stop(): Promise<void> {
    this.recorder.stop();
    const stopped = this.loop.stop(); // from here on no send starts (launch, pump)
    const released = this.handBack([...this.lanes.values()].flatMap((lane) => lane.takeWaiting()));
    await stopped;
    await this.recorder
      .flush()
      .catch((err: unknown) =>
        this.options.logger.warn({ err: (err as Error).message }, 'could not record the last attempts; their leases will expire and they will be sent again'),
      );
    await released;
    this.lanes.clear();
    this.heldBack.clear();
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** Claimed but never sent: freed now rather than when their leases expire. */
  private async handBack(unsent: Due[]): Promise<void> {
    if (unsent.length > 0) await this.options.queue.release(unsent.map((d) => d.id)).catch(() => undefined);
  }

  /** New deliveries were queued: look now rather than at the next idle check. */
  wake(): void {
    this.loop.wake(0);
  }

  /** One round of the loop; while `drain` waits, it also tells when there is nothing left to do. */
  private async round(): Promise<boolean> {
    const { more, quiet } = await this.pump();
    if (this.idleWaiters.length === 0) return more;
    const lanes = [...this.lanes.values()];
    // Sends under way: each lane that runs empty wakes the loop.
    if (lanes.some((lane) => lane.held > 0)) return more;
    // No send is left to carry the last records with a claim: written now (after any write
    // under way), then one more look if this round or that write changed anything.
    const unrecorded = lanes.some((lane) => lane.leased.size > 0);
    await this.recorder.flush();
    if (unrecorded || !quiet) return true;
    for (const resolve of this.idleWaiters.splice(0)) resolve();
    return false;
  }

  /**
   * Claims ahead: up to each origin's lane capacity (16 to 64 rounds of its concurrency, by its
   * rate; `maxHeld` in all), so a lane never runs dry while the next claim is under way, and
   * writes the finished attempts in the same transaction. Origins whose lane is full are
   * skipped in the query. Says whether to claim again at once.
   */
  private async pump(): Promise<Round> {
    const busy = [...this.lanes.values()].filter((lane) => lane.held > 0);
    const free = this.maxHeld - busy.reduce((n, lane) => n + lane.held, 0);
    if (free <= 0) return { more: false, quiet: false };
    const rooms = new Map(busy.map((lane) => [lane.origin, lane.capacity - lane.held]));
    // Candidates enough to top up every origin with room, and one lane's worth for origins
    // not held yet (a full origin is skipped in the query, so others surface at the next claim).
    const fresh = this.options.perTargetConcurrency * lookahead.min;
    const wanted = [...rooms.values()].reduce((n, room) => n + Math.max(0, room), fresh);
    const limit = Math.min(free, maxClaim, wanted);
    // Finished attempts go with the claim: one transaction for both.
    const records = this.recorder.take();
    let round: ClaimResult;
    try {
      round = await this.options.queue.claimRound({ limit, leaseMs: this.leaseMs, rooms, fresh, records });
    } catch (err) {
      this.recorder.putBack(records);
      throw err;
    }
    this.recorder.recorded(records);
    const claimed = round.due;
    // Stopped during the claim: what it brought goes back unsent (`stop` waits for this round).
    if (this.loop.isStopped) return this.handBack(claimed).then(() => ({ more: false, quiet: false }));
    const byOrigin = new Map<string, Due[]>();
    for (const d of claimed) {
      const due = byOrigin.get(d.target_origin);
      if (due) due.push(d);
      else byOrigin.set(d.target_origin, [d]);
    }
    for (const [origin, due] of byOrigin) {
      const lane = this.lane(origin);
      lane.add(due);
      this.startFrom(lane);
    }
    // Claim again at once only when this claim was cut short by its limit and an origin it
    // may serve still has room: more may be due for it. Otherwise the lanes call for the next
    // claim when they run low; claiming again while every origin is full would find nothing
    // (their rows are skipped), and the origins not held yet surface at that next claim.
    const roomLeft = [...this.lanes.values()].some((lane) => lane.held > 0 && lane.capacity > lane.held);
    const more = round.seen === limit && claimed.length === round.seen && roomLeft;
    return { more, quiet: claimed.length === 0 && records.length === 0 };
  }

  /** The origin's lane, made when the origin has none. */
  private lane(origin: string): OriginLane {
    let lane = this.lanes.get(origin);
    if (lane) return lane;
    if (this.lanes.size >= maxLanes) for (const [key, idle] of this.lanes) if (idle.held === 0 && idle.leased.size === 0) this.lanes.delete(key);
    const { perTargetConcurrency } = this.options;
    lane = new OriginLane(origin, perTargetConcurrency, { min: perTargetConcurrency * lookahead.min, max: perTargetConcurrency * lookahead.max });
    this.lanes.set(origin, lane);
    return lane;
  }

  private forgetIfDone(lane: OriginLane): void {
    if (lane.forgettable && this.lanes.get(lane.origin) === lane) this.lanes.delete(lane.origin);
  }

  /**
   * Sends what the lane's free slots allow. While more urgent work needs the CPU (`yieldTo`: the
   * poller is behind on a busy event loop, docs/webhooks.md), one send at a time in all: a lane
   * that could send waits its turn among those held back.
   */
  private startFrom(lane: OriginLane): void {
    const yielding = this.options.yieldTo?.() === true;
    const most = yielding ? Math.max(0, 1 - this.inFlight) : Infinity;
    for (const delivery of lane.startable(this.options.clock.now(), this.options.timeoutMs, most)) this.launch(lane, delivery);
    if (yielding && lane.canStart) this.heldBack.add(lane);
    this.forgetIfDone(lane);
  }

  /**
   * A slot was freed: the lanes held back first, in turn, then `lane`. While yielding, the first
   * that sends goes to the back of the line.
   */
  private refill(lane: OriginLane): void {
    const turn = [...this.heldBack, lane];
    this.heldBack.clear();
    let sent: OriginLane | null = null;
    for (const next of turn) {
      const before = this.inFlight;
      this.startFrom(next);
      if (this.inFlight > before && this.heldBack.delete(next)) sent = next;
    }
    if (sent) this.heldBack.add(sent);
  }

  private launch(lane: OriginLane, delivery: Due): void {
    this.inFlight += 1;
    const work = this.attempts.attempt(delivery).then((record) => {
      this.inFlight -= 1;
      this.recorder.add(record);
      this.sent += 1;
      lane.finished(performance.now());
      if (this.loop.isStopped) return;
      // The freed slot takes the next claimed delivery of the lane at once; completions within
      // a few ms share one claim.
      this.refill(lane);
      if (lane.wantsClaim()) this.loop.wake(coalesceMs);
    });
    void this.loop.track(work);
  }
}

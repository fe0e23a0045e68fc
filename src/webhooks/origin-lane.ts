import type { Due } from './delivery-types.js';

/** A lane holds about this long of its origin's sends (at the rate it answers), within bounds. */
const horizonMs = 250;
/** Sends per origin measured over windows of this length. */
const rateWindowMs = 100;

const inFairOrder = (a: Due, b: Due) => a.fair_at - b.fair_at || a.id - b.id;

/**
 * Everything the deliverer holds for one target origin: the deliveries it leased for the origin
 * (waiting in the lane, in flight, or finished and waiting for their record), how many are in
 * flight (at most WEBHOOK_TARGET_CONCURRENCY, so a slow receiver holds only its own slots and
 * never another origin's), the rate the origin answers at, and how far the lane has grown and
 * whether a top-up claim is under way. It starts nothing itself: the deliverer takes what
 * `startable` hands out and sends it.
 */
export class OriginLane {
  /** Claimed and not yet recorded (nor let go): the leases the deliverer renews. */
  readonly leased = new Set<Due>();
  private waiting: Due[] = [];
  private inFlight = 0;
  /** Sends finished in the current window, when it started, the last window's rate (per ms). */
  private rate: { count: number; since: number; perMs: number } | null = null;
  /** The capacity the lane grew to by running dry while a top-up was under way (0: none). */
  private grown = 0;
  /** The lane asked for a top-up that has not come yet. */
  private refilling = false;
  /** The lane ran dry during the top-up under way (counted once per top-up). */
  private ranDry = false;

  constructor(
    readonly origin: string,
    private readonly concurrency: number,
    /** Deliveries held (in flight and waiting) at least and at most. */
    private readonly bounds: { min: number; max: number },
  ) {}

  /** Deliveries held: in flight plus waiting. */
  get held(): number {
    return this.inFlight + this.waiting.length;
  }

  /** Nothing held, nothing leased, nothing learnt worth keeping: the deliverer may forget the lane. */
  get forgettable(): boolean {
    return this.held === 0 && this.leased.size === 0 && this.grown === 0;
  }

  /**
   * How many deliveries to hold: enough for `horizonMs` of the origin's sends at the rate it has
   * been answering, so a fast receiver's lane never runs dry while the next claim is under way,
   * and a slow one's stays short (a hook whose first delivery arrives waits behind at most that
   * much of the origin's sending: fairness).
   */
  get capacity(): number {
    const perMs = this.rate?.perMs ?? 0;
    const { min, max } = this.bounds;
    return Math.max(min, Math.min(max, Math.max(Math.round(perMs * horizonMs), this.grown)));
  }

  /**
   * Claimed deliveries join the lane, kept in fair order (`fair_at`, then id). So another hook's
   * delivery claimed while the lane holds one hook's backlog goes ahead of the later part of that
   * backlog, instead of behind all of it. A top-up that arrives before the lane ran dry shrinks a
   * grown lane by a quarter, so a receiver that slows down gets a short lane again.
   */
  add(claimed: Due[]): void {
    if (claimed.length === 0) return;
    if (this.refilling && !this.ranDry && this.grown > 0) this.grown = this.grown * 0.75 <= this.bounds.min ? 0 : Math.floor(this.grown * 0.75);
    this.refilling = false;
    this.ranDry = false;
    for (const delivery of claimed) {
      this.leased.add(delivery);
      this.waiting.push(delivery);
    }
    this.waiting.sort(inFairOrder);
  }

  /**
   * Takes the deliveries the free slots allow (`most` at most), in fair order; they count as in flight until
   * `finished`. One whose lease no longer covers a send (`leased_until` less than `sendMs` after
   * `now`: renewals failed while the database was away) is let go unsent: whoever claims it after
   * the lease sends it.
   */
  startable(now: number, sendMs: number, most = Infinity): Due[] {
    const start: Due[] = [];
    while (this.waiting.length > 0 && this.inFlight < this.concurrency && start.length < most) {
      const next = this.waiting.shift()!;
      if (next.leased_until - now < sendMs) {
        this.leased.delete(next);
        continue;
      }
      this.inFlight += 1;
      start.push(next);
    }
    return start;
  }

  /** A delivery waits and a slot is free. */
  get canStart(): boolean {
    return this.waiting.length > 0 && this.inFlight < this.concurrency;
  }

  /**
   * A send is done (its delivery stays leased until its record lands): the rate is counted, and
   * forgotten when the lane has nothing left in flight or waiting.
   */
  finished(nowMs: number): void {
    this.inFlight -= 1;
    if (!this.rate) this.rate = { count: 1, since: nowMs, perMs: 0 };
    else if (nowMs - this.rate.since < rateWindowMs) this.rate.count += 1;
    else {
      // Smoothed: the mean of this window's rate and the estimate before it.
      const perMs = this.rate.count / (nowMs - this.rate.since);
      this.rate = { count: 1, since: nowMs, perMs: this.rate.perMs === 0 ? perMs : (this.rate.perMs + perMs) / 2 };
    }
    if (this.held === 0) this.rate = null;
  }

  /**
   * Whether to ask for a claim now, after a send finished and its slot took the next delivery:
   * once when the lane has run half down (so one claim brings half a lane; it counts as
   * refilling until the claim brings some), and whenever it is empty. A lane that runs empty
   * while its top-up is under way (the claim takes longer than the lane lasts, as with a
   * database a few milliseconds away) holds four times as much from now on, up to the bound.
   */
  wantsClaim(): boolean {
    const empty = this.waiting.length === 0;
    if (empty && this.refilling && !this.ranDry) {
      this.ranDry = true;
      this.grown = Math.min(this.bounds.max, 4 * this.capacity);
    }
    const low = this.held <= this.capacity / 2;
    if (!empty && !(low && !this.refilling)) return false;
    if (low) this.refilling = true;
    return true;
  }

  /** Takes the deliveries whose leases were lost out of the lane, unsent. */
  lose(lost: Set<Due>): void {
    for (const d of lost) this.leased.delete(d);
    this.waiting = this.waiting.filter((d) => !lost.has(d));
  }

  /** Empties the lane and returns what waited in it, no longer leased (a stopping deliverer releases it). */
  takeWaiting(): Due[] {
    const waiting = this.waiting;
    this.waiting = [];
    for (const d of waiting) this.leased.delete(d);
    return waiting;
  }

  /** A delivery's attempt was recorded: its lease is over. */
  recorded(delivery: Due): void {
    this.leased.delete(delivery);
  }
}

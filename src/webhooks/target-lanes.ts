import type { Due } from './delivery-queue.js';

/**
 * Per-target lanes: claimed deliveries wait in their target origin's lane and are started as
 * that origin's slots (WEBHOOK_TARGET_CONCURRENCY) free up, so a slow receiver holds only its
 * own slots and never another origin's.
 */
/** A lane holds about this long of its origin's sends (at the rate it answers), within bounds. */
const horizonMs = 250;
/** Sends per origin measured over windows of this length. */
const rateWindowMs = 100;

const inFairOrder = (a: Due, b: Due) => a.fair_at - b.fair_at || a.id - b.id;

export class TargetLanes {
  private readonly inFlight = new Map<string, number>();
  /** Per origin: sends finished in the current window, when it started, the last window's rate (per ms). */
  private readonly rates = new Map<string, { count: number; since: number; perMs: number }>();
  /** Per origin: the capacity it grew to by running dry while a top-up was under way. */
  private readonly grown = new Map<string, number>();
  private readonly waiting = new Map<string, Due[]>();
  private started = 0;

  constructor(
    private readonly concurrency: number,
    /** Deliveries held per origin (in flight and waiting) at least and at most. */
    private readonly capacityBounds: { min: number; max: number },
    /** Starts one delivery; `finished(origin)` must be called when it is done. */
    private readonly launch: (delivery: Due) => void,
    /** A delivery that may no longer be sent (its lease cannot cover a send) is let go with this. */
    private readonly letGo: (delivery: Due) => boolean,
  ) {}

  /** Deliveries held for an origin: in flight plus waiting in its lane. */
  held(origin: string): number {
    return (this.inFlight.get(origin) ?? 0) + (this.waiting.get(origin)?.length ?? 0);
  }

  /**
   * How many deliveries to hold for an origin: enough for `horizonMs` of its sends at the rate
   * it has been answering, so a fast receiver's lane never runs dry while the next claim is
   * under way, and a slow one's stays short (a hook whose first delivery arrives waits behind
   * at most that much of the origin's sending: fairness).
   */
  capacity(origin: string): number {
    const perMs = this.rates.get(origin)?.perMs ?? 0;
    const { min, max } = this.capacityBounds;
    return Math.max(min, Math.min(max, Math.max(Math.round(perMs * horizonMs), this.grown.get(origin) ?? 0)));
  }

  /**
   * The origin's lane ran dry while its top-up was under way (the claim takes longer than the
   * lane lasts, as with a database a few milliseconds away): it holds twice as much from now
   * on, up to the bound. A top-up that arrives before the lane ran dry shrinks it by a quarter
   * (`keptUp`), so a receiver that slows down gets a short lane again.
   */
  ranDry(origin: string): void {
    if (this.grown.size > 10_000) this.grown.clear();
    this.grown.set(origin, Math.min(this.capacityBounds.max, 4 * this.capacity(origin)));
  }

  keptUp(origin: string): void {
    const grown = this.grown.get(origin);
    if (grown === undefined) return;
    if (grown * 0.75 <= this.capacityBounds.min) this.grown.delete(origin);
    else this.grown.set(origin, Math.floor(grown * 0.75));
  }

  /** Deliveries held in all. */
  heldTotal(): number {
    let n = this.started;
    for (const lane of this.waiting.values()) n += lane.length;
    return n;
  }

  /** Origins with something in flight or waiting. */
  origins(): Set<string> {
    return new Set([...this.inFlight.keys(), ...this.waiting.keys()]);
  }

  has(origin: string): boolean {
    return this.waiting.has(origin);
  }

  /**
   * Adds claimed deliveries to their lanes, each lane kept in fair order (`fair_at`, then id),
   * and starts what the free slots allow. So another hook's delivery claimed while a lane holds
   * one hook's backlog goes ahead of the later part of that backlog, instead of behind all of it.
   */
  add(claimed: Due[]): void {
    const touched = new Set<string>();
    for (const delivery of claimed) {
      const lane = this.waiting.get(delivery.target_origin);
      if (lane) lane.push(delivery);
      else this.waiting.set(delivery.target_origin, [delivery]);
      touched.add(delivery.target_origin);
    }
    for (const origin of touched) {
      const lane = this.waiting.get(origin)!;
      lane.sort(inFairOrder);
      this.drain(origin);
    }
  }

  /** A delivery of `origin` is done: its slot takes the next of the lane at once. */
  finished(origin: string): void {
    this.started -= 1;
    const now = performance.now();
    const rate = this.rates.get(origin);
    if (!rate) this.rates.set(origin, { count: 1, since: now, perMs: 0 });
    else if (now - rate.since < rateWindowMs) rate.count += 1;
    else {
      // Smoothed: the mean of this window's rate and the estimate before it.
      const perMs = rate.count / (now - rate.since);
      rate.perMs = rate.perMs === 0 ? perMs : (rate.perMs + perMs) / 2;
      rate.count = 1;
      rate.since = now;
    }
    const left = (this.inFlight.get(origin) ?? 1) - 1;
    if (left === 0) this.inFlight.delete(origin);
    else this.inFlight.set(origin, left);
  }

  /** Starts deliveries from an origin's lane while it has free slots. */
  drain(origin: string): void {
    const lane = this.waiting.get(origin);
    while (lane && lane.length > 0 && (this.inFlight.get(origin) ?? 0) < this.concurrency) {
      const next = lane.shift()!;
      if (this.letGo(next)) continue;
      this.inFlight.set(origin, (this.inFlight.get(origin) ?? 0) + 1);
      this.started += 1;
      this.launch(next);
    }
    if (lane && lane.length === 0) this.waiting.delete(origin);
    if (!lane && (this.inFlight.get(origin) ?? 0) === 0) this.rates.delete(origin);
  }

  /** Takes deliveries out of the lanes unsent (their leases were lost). */
  drop(lost: Set<Due>): void {
    for (const [origin, lane] of this.waiting) {
      const left = lane.filter((d) => !lost.has(d));
      if (left.length === 0) this.waiting.delete(origin);
      else this.waiting.set(origin, left);
    }
  }

  /** Empties the lanes and returns what waited in them (a stopping deliverer releases it). */
  takeWaiting(): Due[] {
    const all = [...this.waiting.values()].flat();
    this.waiting.clear();
    return all;
  }
}

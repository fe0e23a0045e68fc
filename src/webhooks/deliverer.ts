import { LRUCache } from 'lru-cache';
import { ClaimLoop } from '../background/claim-loop.js';
import type { AttemptRecord, ClaimResult, Due } from './delivery-queue.js';
import type { SendResult } from './sender.js';
import { rotatedHeaders } from './signing.js';
import { decide } from './retry-policy.js';
import { AttemptRecorder } from './attempt-recorder.js';
import { TargetLanes } from './target-lanes.js';
import { coalesceMs, lookahead, maxBackoffMs, maxClaim, renewalsPerLease, type DelivererOptions } from './deliverer-options.js';

export type { DelivererOptions };

/**
 * The webhook delivery engine. Its queue is the `deliveries` table (DeliveryQueue), so a
 * restart or crash loses nothing: a delivery is leased while in flight, and a lease that
 * outlives its process expires and the delivery is sent again (at-least-once, same
 * `webhook-id`). What an attempt's answer means is the retry policy's (retry-policy.ts).
 *
 * It runs as a claim loop (background/claim-loop.ts) feeding a lane per target origin
 * (target-lanes.ts): it claims due deliveries a few rounds ahead per origin, sends from each
 * lane as that origin's slots free up, and tops the lanes up in the background; an origin whose
 * lane is full is skipped by the claim. Finished attempts are recorded in small batches
 * (attempt-recorder.ts), and signing secrets stay decrypted in memory, so a delivery costs
 * little besides its POST.
 */
export class WebhookDeliverer {
  private readonly loop: ClaimLoop;
  private readonly lanes: TargetLanes;
  private readonly recorder: AttemptRecorder;
  private readonly secrets = new LRUCache<string, string>({ max: 10_000 });
  /** Deliveries this replica holds a lease on: in its lanes, in flight or waiting for their record. */
  private readonly leased = new Set<Due>();
  /** Origins whose lane has asked for a top-up that has not come yet. */
  private readonly refilling = new Set<string>();
  /** Origins whose lane ran dry during the top-up under way (counted once per top-up). */
  private readonly ranDry = new Set<string>();

  constructor(private readonly options: DelivererOptions) {
    this.lanes = new TargetLanes(
      options.perTargetConcurrency,
      { min: options.perTargetConcurrency * lookahead.min, max: options.perTargetConcurrency * lookahead.max },
      (d) => this.launch(d),
      (d) => this.letGoIfExpiring(d),
    );
    this.recorder = new AttemptRecorder(options.queue, options.logger, (batch) => {
      // Recorded: the lease is over (kept renewed until here, so a slow record loses nothing).
      for (const r of batch) this.leased.delete(r.delivery);
    });
    this.loop = new ClaimLoop({
      name: 'deliverer',
      logger: options.logger,
      round: () => this.pump(),
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
   * Renews the leases held; a delivery whose lease was lost (it ran out while the database was
   * away and another replica claimed it, or it was cancelled) is dropped from its lane unsent.
   */
  private async renew(): Promise<void> {
    if (this.leased.size === 0) return;
    const held = [...this.leased];
    const kept = await this.options.queue.renew(held, this.leaseMs);
    if (kept.length === held.length) return;
    const keep = new Set(kept);
    const lost = new Set(held.filter((d) => !keep.has(d)));
    for (const d of lost) this.leased.delete(d);
    this.lanes.drop(lost);
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
    const released = this.handBack(this.lanes.takeWaiting());
    await stopped;
    await this.recorder
      .flush()
      .catch((err: unknown) =>
        this.options.logger.warn({ err: (err as Error).message }, 'could not record the last attempts; their leases will expire and they will be sent again'),
      );
    await released;
    this.leased.clear();
  }

  /** Claimed but never sent: freed now rather than when their leases expire. */
  private async handBack(unsent: Due[]): Promise<void> {
    for (const d of unsent) this.leased.delete(d);
    if (unsent.length > 0) await this.options.queue.release(unsent.map((d) => d.id)).catch(() => undefined);
  }

  /** New deliveries were queued: look now rather than at the next idle check. */
  wake(): void {
    this.loop.wake(0);
  }

  /**
   * Sends every delivery due now (up to one claim's worth), waits for them and their records;
   * returns how many were attempted. For tests and tools; the running service pumps instead.
   */
  async runOnce(): Promise<number> {
    const { perTargetConcurrency } = this.options;
    const claimed = await this.options.queue.claim({
      limit: 100,
      // Sent through per-origin lanes: the last of a lane may wait for those before it.
      leaseMs: (Math.ceil(100 / perTargetConcurrency) + 1) * this.options.timeoutMs + 5000,
    });
    const lanes = new Map<string, Due[]>();
    for (const d of claimed) lanes.set(d.target_origin, [...(lanes.get(d.target_origin) ?? []), d]);
    await Promise.all(
      [...lanes.values()].map((lane) =>
        Promise.all(
          Array.from({ length: Math.min(perTargetConcurrency, lane.length) }, async () => {
            for (let d = lane.shift(); d; d = lane.shift()) this.recorder.hold(await this.attempt(d));
          }),
        ),
      ),
    );
    await this.recorder.flush();
    return claimed.length;
  }

  /**
   * Claims ahead: up to each origin's lane capacity (16 to 64 rounds of its concurrency, by its
   * rate; `maxHeld` in all), so a lane never runs dry while the next claim is under way, and
   * writes the finished attempts in the same transaction. Origins whose lane is full are
   * skipped in the query. Returns whether to claim again at once.
   */
  private async pump(): Promise<boolean> {
    const free = this.maxHeld - this.lanes.heldTotal();
    if (free <= 0) return false;
    const origins = this.lanes.origins();
    const rooms = new Map([...origins].map((origin) => [origin, this.lanes.capacity(origin) - this.lanes.held(origin)]));
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
    if (this.loop.isStopped) return this.handBack(claimed).then(() => false);
    for (const delivery of claimed) {
      this.leased.add(delivery);
      if (this.refilling.delete(delivery.target_origin) && !this.ranDry.has(delivery.target_origin)) this.lanes.keptUp(delivery.target_origin);
      this.ranDry.delete(delivery.target_origin);
    }
    this.lanes.add(claimed);
    // Claim again at once only when this claim was cut short by its limit and an origin it
    // may serve still has room: more may be due for it. Otherwise the lanes call for the next
    // claim when they run low; claiming again while every origin is full would find nothing
    // (their rows are skipped), and the origins not held yet surface at that next claim.
    const roomLeft = [...this.lanes.origins()].some((origin) => this.lanes.capacity(origin) > this.lanes.held(origin));
    return round.seen === limit && claimed.length === round.seen && roomLeft;
  }

  /**
   * A delivery whose lease no longer covers a send (renewals failed while the database was
   * away) is let go unsent: whoever claims it after the lease sends it.
   */
  private letGoIfExpiring(delivery: Due): boolean {
    if (delivery.leased_until - this.options.clock.now() >= this.options.timeoutMs) return false;
    this.leased.delete(delivery);
    return true;
  }

  private launch(delivery: Due): void {
    const origin = delivery.target_origin;
    const work = this.attempt(delivery).then((record) => {
      this.recorder.add(record);
      this.lanes.finished(origin);
      if (this.loop.isStopped) return;
      // The freed slot takes the next claimed delivery of the lane at once. The lane asks for
      // a top-up once, when it has run half down (so one claim brings half a lane), and
      // whenever it is empty; completions within a few ms share one claim.
      this.lanes.drain(origin);
      if (!this.lanes.has(origin) && this.refilling.has(origin) && !this.ranDry.has(origin)) {
        this.ranDry.add(origin);
        this.lanes.ranDry(origin);
      }
      const low = this.lanes.held(origin) <= this.lanes.capacity(origin) / 2;
      if (!this.lanes.has(origin) || (low && !this.refilling.has(origin))) {
        if (low) this.refilling.add(origin);
        this.loop.wake(coalesceMs);
      }
    });
    void this.loop.track(work);
  }

  /** Signs and sends one delivery; never throws. */
  private async attempt(delivery: Due): Promise<AttemptRecord> {
    const { clock, send } = this.options;
    const body = `{"type":${JSON.stringify(delivery.type)},"timestamp":${JSON.stringify(delivery.occurred_at)},"data":${delivery.payload}}`;
    let result: SendResult;
    try {
      const now = clock.now();
      // During a rotation's overlap the old secret signs too (docs/webhooks.md, "Rotating the secret").
      const previous = delivery.secret_previous_cipher && now < Number(delivery.secret_previous_until) ? this.secret(delivery.secret_previous_cipher) : null;
      const headers = rotatedHeaders(this.secret(delivery.secret_cipher), previous, delivery.webhook_id, Math.floor(now / 1000), body);
      result = await send(delivery.target_url, body, { ...headers });
    } catch (err) {
      result = { status: null, error: (err as Error).message, durationMs: 0 };
    }
    return this.outcome(delivery, result);
  }

  /** A hook's signing secret, unsealed once and kept by its ciphertext. */
  private secret(cipher: string): string {
    let secret = this.secrets.get(cipher);
    if (secret === undefined) {
      secret = this.options.box.open(cipher);
      this.secrets.set(cipher, secret);
    }
    return secret;
  }

  private outcome(delivery: Due, result: SendResult): AttemptRecord {
    const now = this.options.clock.now();
    const attempt = delivery.attempts + 1;
    const { outcome, nextAttemptAt } = decide(attempt, result, this.options.retryScheduleMs, now);
    this.options.metrics?.deliveryOutcome(outcome, result.durationMs);
    // A delivered attempt is routine; every failed one (retrying, gone, dead) is worth a look.
    this.options.logger[outcome === 'delivered' ? 'debug' : 'warn'](
      { hook: delivery.hook_id, event: delivery.event_id, attempt, status: result.status, error: result.error, outcome },
      'webhook attempt',
    );
    return {
      delivery,
      attempt,
      outcome,
      statusCode: result.status,
      error: result.error,
      durationMs: result.durationMs,
      attemptedAt: now,
      nextAttemptAt,
      requestHeaders: result.requestHeaders ?? null,
      responseBody: result.responseBody ?? null,
    };
  }
}

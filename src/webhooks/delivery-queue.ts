import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { chunks } from '../db/chunks.js';
import { formatMicros, type Clock } from '../time/timestamps.js';

/** A delivery leased to this replica, with what it takes to send it. */
export interface Due {
  id: number;
  hook_id: string;
  webhook_id: string;
  attempts: number;
  target_url: string;
  target_origin: string;
  secret_cipher: string;
  event_id: string;
  type: string;
  occurred_at: string;
  payload: string;
  /** When this replica's lease ends (ms); moved on by `renew`. */
  leased_until: number;
}

/** A due delivery before it is leased: enough to choose by origin. */
export interface Candidate {
  id: number;
  target_origin: string;
}

export type Outcome = 'delivered' | 'disabled' | 'retrying' | 'dead';

/** One finished attempt, ready to be recorded. */
export interface AttemptRecord {
  delivery: Due;
  attempt: number;
  outcome: Outcome;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: number;
  nextAttemptAt: number | null;
}

export interface ClaimOptions {
  /** Candidates looked at; at most `pick` of them are leased. */
  limit: number;
  leaseMs: number;
  /** Origins at their concurrency limit: skipped in the query. */
  saturated: string[];
  /** Which candidates to lease (per-origin slots); the rest stay free for others. */
  pick: (candidates: Candidate[]) => Candidate[];
}

/**
 * The delivery queue (CONTRACT 6.4, 10): the `deliveries` table. A due delivery is leased to
 * one replica (PostgreSQL: `FOR UPDATE SKIP LOCKED`, so replicas claim disjoint rows without
 * waiting; SQLite: under its write lock); a lease that outlives its replica expires and the
 * delivery is sent again with the same `webhook-id`.
 */
export class DeliveryQueue {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async claim(options: ClaimOptions): Promise<Due[]> {
    const now = this.clock.now();
    return this.db.transaction(async (trx) => {
      // Candidates first, ids and origins only: most may be left for later (their origin's
      // lane is full), so the payloads are read for the picked ones alone.
      // Anything due at all? One step on the due index; without it, the fair-order scan below
      // would walk every waiting retry to find out there is nothing to do.
      const anyDue = await trx.selectFrom('deliveries').select('id').where('status', '=', 'pending').where('next_attempt_at', '<=', now).limit(1).executeTakeFirst();
      if (!anyDue) return [];
      const candidates = await trx
        .selectFrom('deliveries as d')
        .innerJoin('hooks as h', 'h.id', 'd.hook_id')
        .select(['d.id', sql<string>`coalesce(h.target_origin, 'invalid')`.as('target_origin')])
        .where('d.status', '=', 'pending')
        // `+` keeps both planners off the due index here: the scan follows deliveries_fair
        // (status, fair_at, next_attempt_at) in fair order, checking dueness in the index,
        // instead of sorting every due row.
        .where(sql<number>`+d.next_attempt_at`, '<=', now)
        .where('h.status', '!=', 'disabled')
        .$if(options.saturated.length > 0, (q) => q.where('h.target_origin', 'not in', options.saturated))
        // Fair across hooks: in the order of their virtual times (webhooks/fan-out.ts), so
        // one hook's backlog delays only that hook.
        .orderBy('d.fair_at')
        .orderBy('d.id')
        .limit(options.limit)
        .$if(this.db.engine === 'postgres', (q) => q.forUpdate('d').skipLocked())
        .execute();
      const picked = options.pick(candidates.map((c) => ({ id: Number(c.id), target_origin: c.target_origin })));
      if (picked.length === 0) return [];
      const ids = picked.map((d) => d.id);
      await trx
        .updateTable('deliveries')
        // The lease also moves the delivery's due time to its end: the due-index scan of the
        // next claim then skips leased rows instead of reading past them, and a lease that
        // outlives its replica simply makes the delivery due again.
        .set({ leased_until: now + options.leaseMs, next_attempt_at: now + options.leaseMs })
        .where('id', 'in', ids)
        .execute();
      const rows = await trx
        .selectFrom('deliveries as d')
        .innerJoin('hooks as h', 'h.id', 'd.hook_id')
        .innerJoin('events as e', 'e.seq', 'd.event_seq')
        .select([
          'd.id',
          'd.hook_id',
          'd.webhook_id',
          'd.attempts',
          'h.target_url',
          sql<string>`coalesce(h.target_origin, 'invalid')`.as('target_origin'),
          'h.secret_cipher',
          'e.id as event_id',
          'e.type',
          'e.occurred_at',
          'e.payload',
        ])
        .where('d.id', 'in', ids)
        .orderBy('d.fair_at')
        .orderBy('d.id')
        .execute();
      return rows.map((r) => ({ ...r, id: Number(r.id), leased_until: now + options.leaseMs }));
    });
  }

  /**
   * Extends the leases of deliveries this replica still holds to `leaseMs` from now, and
   * returns those it still held. A lease that ended and was claimed by another replica (its
   * `leased_until` is no longer ours), a delivery recorded, cancelled or deleted meanwhile:
   * not renewed, and the caller lets go of it.
   */
  async renew(held: Due[], leaseMs: number): Promise<Due[]> {
    const until = this.clock.now() + leaseMs;
    const renewed = new Set<number>();
    // One statement per chunk: a row is still ours when its lease end is one this replica
    // set (a takeover sets a later one).
    for (const part of chunks(held)) {
      const rows = await this.db.kysely
        .updateTable('deliveries')
        .set({ leased_until: until, next_attempt_at: until })
        .where('id', 'in', part.map((d) => d.id))
        .where('leased_until', 'in', [...new Set(part.map((d) => d.leased_until))])
        .where('status', '=', 'pending')
        .returning('id')
        .execute();
      for (const row of rows) renewed.add(Number(row.id));
    }
    const kept = held.filter((d) => renewed.has(d.id));
    for (const d of kept) d.leased_until = until;
    return kept;
  }

  /** Gives up leases of deliveries that were claimed but not sent (a stopping replica). */
  async release(ids: number[]): Promise<void> {
    for (const part of chunks(ids)) {
      await this.db.kysely
        .updateTable('deliveries')
        .set({ leased_until: 0, next_attempt_at: this.clock.now() })
        .where('id', 'in', part)
        .where('status', '=', 'pending')
        .execute();
    }
  }

  /**
   * Records finished attempts in one transaction: each delivery's new state, the attempt log
   * (the latest 100 per hook are kept), and for a 410 the hook disabled with its queue
   * cancelled. A delivery cancelled meanwhile (another attempt's 410) stays cancelled; one
   * whose hook was deleted while the attempt was in flight is gone, and so is its record.
   *
   * A record applies only to a delivery still at the attempt before it (`attempts = attempt -
   * 1`), so writing a batch again after a commit whose answer was lost changes nothing, and a
   * late record (its lease expired and another replica tried and recorded the same attempt)
   * is skipped rather than counted twice.
   */
  async record(records: AttemptRecord[]): Promise<void> {
    if (records.length === 0) return;
    await this.db.transaction(async (trx) => {
      const still = new Set<number>();
      const final = records.filter((r) => r.outcome === 'delivered' || r.outcome === 'dead');
      // One statement per outcome and attempt number (a batch mostly shares both).
      const groups = new Map<string, AttemptRecord[]>();
      for (const r of final) groups.set(`${r.outcome} ${r.attempt}`, [...(groups.get(`${r.outcome} ${r.attempt}`) ?? []), r]);
      for (const group of groups.values()) {
        const { outcome: status, attempt } = group[0]!;
        for (const ids of chunks(group.map((r) => r.delivery.id))) {
          const rows = await trx
            .updateTable('deliveries')
            .set({ status: sql`CASE WHEN status = 'cancelled' THEN status ELSE ${status} END`, attempts: attempt, leased_until: 0 })
            .where('id', 'in', ids)
            .where('attempts', '=', attempt - 1)
            .returning('id')
            .execute();
          for (const row of rows) still.add(Number(row.id));
        }
      }
      for (const r of records.filter((x) => x.outcome === 'retrying' || x.outcome === 'disabled')) {
        const row = await trx
          .updateTable('deliveries')
          .set({
            status: sql`CASE WHEN status = 'cancelled' THEN status ELSE ${r.outcome === 'retrying' ? 'pending' : 'cancelled'} END`,
            attempts: r.attempt,
            next_attempt_at: r.nextAttemptAt ?? sql`next_attempt_at`,
            // A retry takes its place by when it is due: the claim's scan in fair_at order
            // then meets due deliveries first, however many retries wait for later.
            fair_at: r.nextAttemptAt === null ? sql`fair_at` : sql`CASE WHEN fair_at < ${r.nextAttemptAt} THEN ${r.nextAttemptAt} ELSE fair_at END`,
            leased_until: 0,
          })
          .where('id', '=', r.delivery.id)
          .where('attempts', '=', r.attempt - 1)
          .returning('id')
          .executeTakeFirst();
        if (row) still.add(Number(row.id));
        if (row && r.outcome === 'disabled') {
          await trx
            .updateTable('hooks')
            .set({ status: 'disabled', status_reason: 'The receiver answered 410 Gone', disabled_at: r.attemptedAt })
            .where('id', '=', r.delivery.hook_id)
            .execute();
          await trx.updateTable('deliveries').set({ status: 'cancelled' }).where('hook_id', '=', r.delivery.hook_id).where('status', '=', 'pending').execute();
        }
      }
      const logged = records.filter((r) => still.has(r.delivery.id));
      if (logged.length === 0) return;
      await trx.insertInto('delivery_attempts').values(logged.map(attemptRow)).execute();
      for (const hookId of new Set(logged.map((r) => r.delivery.hook_id))) {
        const cutoff = await trx.selectFrom('delivery_attempts').select('id').where('hook_id', '=', hookId).orderBy('id', 'desc').limit(1).offset(100).executeTakeFirst();
        if (cutoff) await trx.deleteFrom('delivery_attempts').where('hook_id', '=', hookId).where('id', '<=', cutoff.id).execute();
      }
    });
  }

  /**
   * Deliveries still pending whose event was logged before `cutoff` (ms) are given up: `dead`,
   * with an attempt record that says why, so the end shows in the hook's deliveries list instead
   * of the delivery vanishing with its event. Returns how many.
   */
  async expire(cutoff: number, reason: string): Promise<number> {
    const now = this.clock.now();
    let expired = 0;
    for (;;) {
      const done = await this.db.transaction(async (trx) => {
        const rows = await trx
          .selectFrom('deliveries as d')
          .innerJoin('events as e', 'e.seq', 'd.event_seq')
          .select(['d.id', 'd.hook_id', 'd.webhook_id', 'd.attempts', 'e.id as event_id'])
          .where('d.status', '=', 'pending')
          .where('e.created_at', '<', cutoff)
          .limit(500)
          .execute();
        if (rows.length === 0) return 0;
        await trx.updateTable('deliveries').set({ status: 'dead', leased_until: 0 }).where('id', 'in', rows.map((r) => r.id)).where('status', '=', 'pending').execute();
        await trx
          .insertInto('delivery_attempts')
          .values(
            rows.map((r) => ({
              delivery_id: r.id,
              hook_id: r.hook_id,
              event_id: r.event_id,
              webhook_id: r.webhook_id,
              attempt: r.attempts + 1,
              status_code: null,
              error: reason,
              duration_ms: 0,
              attempted_at: formatMicros(now * 1000),
              next_attempt_at: null,
              outcome: 'dead',
            })),
          )
          .execute();
        return rows.length;
      });
      expired += done;
      if (done < 500) return expired;
    }
  }

  /**
   * The queue for metrics: deliveries pending (never tried), retrying (tried, due again) and
   * dead, and how long the oldest due one has waited (0 when none is due). Leased deliveries
   * count as pending or retrying; their due time is their lease's end.
   */
  async stats(): Promise<{ pending: number; retrying: number; dead: number; oldestDueMs: number }> {
    const now = this.clock.now();
    const row = await this.db.kysely
      .selectFrom('deliveries')
      .select([
        sql<number>`coalesce(sum(CASE WHEN status = 'pending' AND attempts = 0 THEN 1 ELSE 0 END), 0)`.as('pending'),
        sql<number>`coalesce(sum(CASE WHEN status = 'pending' AND attempts > 0 THEN 1 ELSE 0 END), 0)`.as('retrying'),
        sql<number>`coalesce(sum(CASE WHEN status = 'dead' THEN 1 ELSE 0 END), 0)`.as('dead'),
        sql<number | null>`min(CASE WHEN status = 'pending' THEN next_attempt_at END)`.as('first_due'),
      ])
      .where('status', 'in', ['pending', 'dead'])
      .executeTakeFirstOrThrow();
    const firstDue = row.first_due === null ? null : Number(row.first_due);
    return {
      pending: Number(row.pending),
      retrying: Number(row.retrying),
      dead: Number(row.dead),
      oldestDueMs: firstDue === null ? 0 : Math.max(0, now - firstDue),
    };
  }
}

function attemptRow(r: AttemptRecord) {
  return {
    delivery_id: r.delivery.id,
    hook_id: r.delivery.hook_id,
    event_id: r.delivery.event_id,
    webhook_id: r.delivery.webhook_id,
    attempt: r.attempt,
    status_code: r.statusCode,
    error: r.error,
    duration_ms: r.durationMs,
    attempted_at: formatMicros(r.attemptedAt * 1000),
    next_attempt_at: r.nextAttemptAt === null ? null : formatMicros(r.nextAttemptAt * 1000),
    outcome: r.outcome,
  };
}

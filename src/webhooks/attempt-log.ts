import { sql, type Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import type { Db } from '../db/database.js';
import { chunks } from '../db/chunks.js';
import { lockHooks } from '../db/hook-locks.js';
import { inSlices } from '../db/slices.js';
import { hookWrites } from './hook-store.js';
import { retryPlace } from './fan-out.js';
import { formatMicros } from '../time/timestamps.js';
import type { AttemptRecord } from './delivery-types.js';

/**
 * How many attempts a delivery's log keeps (docs/webhooks.md, "The attempt log"): its first and
 * its latest, 20 in all, or more when the retry schedule is longer (`scheduleLength` delays
 * make a round of `scheduleLength + 1` attempts; two rounds' ends and the first always fit).
 */
export const attemptsKept = (scheduleLength: number): number => Math.max(20, scheduleLength + 3);

/**
 * What a delivery's log may hold when a resend or a recover starts it on a fresh retry schedule
 * (`trimAttempts` then): room for a whole round (`scheduleLength + 1` attempts) under the bound.
 * A round never makes more attempts than that (the delivery is `dead` after its last), so the
 * log stays within `attemptsKept` without any work on the deliverer's path.
 */
export const attemptsKeptAtReset = (scheduleLength: number): number => attemptsKept(scheduleLength) - scheduleLength - 1;

/**
 * Drops the attempts of each delivery in `ids` that has more than `keep` of them, between its
 * first and its latest `keep - 1`, and counts them in the delivery's `attempts_dropped` (the
 * detail view says so). A look-up by delivery on `delivery_attempts_delivery`, then work only
 * for the deliveries over the bound. Returns how many attempts went.
 */
export async function trimAttempts(trx: Kysely<Tables>, ids: readonly number[], keep: number): Promise<number> {
  let dropped = 0;
  for (const part of chunks([...ids])) {
    const over = await trx
      .selectFrom('delivery_attempts')
      .select('delivery_id')
      .where('delivery_id', 'in', part)
      .groupBy('delivery_id')
      .having((eb) => eb.fn.countAll(), '>', keep)
      .execute();
    for (const { delivery_id: id } of over) {
      const rows = await trx.selectFrom('delivery_attempts').select('id').where('delivery_id', '=', id).orderBy('id').execute();
      const doomed = rows.slice(1, rows.length - (keep - 1)).map((r) => r.id);
      if (doomed.length === 0) continue;
      for (const ids of chunks(doomed)) await trx.deleteFrom('delivery_attempts').where('id', 'in', ids).execute();
      await trx
        .updateTable('deliveries')
        .set({ attempts_dropped: sql`attempts_dropped + ${doomed.length}` })
        .where('id', '=', id)
        .execute();
      dropped += doomed.length;
    }
  }
  return dropped;
}

/**
 * Records finished attempts in one transaction: each delivery's new state, the attempt log
 * (kept as long as its delivery, within `attemptsKept`, and gone with its event after the
 * retention), and for a 410 the hook disabled with its queue
 * cancelled. A delivery cancelled meanwhile (another attempt's 410) stays cancelled; one
 * whose hook was deleted while the attempt was in flight is gone, and so is its record.
 *
 * A record applies only to a delivery still at the attempt before it (`attempts = attempt -
 * 1`), so writing a batch again after a commit whose answer was lost changes nothing, and a
 * late record (its lease expired and another replica tried and recorded the same attempt)
 * is skipped rather than counted twice.
 */
export async function recordAttempts(db: Db, records: AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  await db.transaction((trx) => recordAttemptsIn(trx, records));
}

/** `recordAttempts` inside a transaction the caller holds (the deliverer's claim writes them with it). */
export async function recordAttemptsIn(trx: Kysely<Tables>, records: AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
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
        // A retry takes its place its delay after the origin's virtual time (fan-out.ts).
        fair_at: r.nextAttemptAt === null ? sql`fair_at` : retryPlace('deliveries', r.attemptedAt, r.nextAttemptAt - r.attemptedAt),
        leased_until: 0,
      })
      .where('id', '=', r.delivery.id)
      .where('attempts', '=', r.attempt - 1)
      .returning('id')
      .executeTakeFirst();
    if (row) still.add(Number(row.id));
    if (row && r.outcome === 'disabled') {
      await hookWrites.disable(trx, r.delivery.hook_id, 'The receiver answered 410 Gone', r.attemptedAt);
      await trx.updateTable('deliveries').set({ status: 'cancelled' }).where('hook_id', '=', r.delivery.hook_id).where('status', '=', 'pending').execute();
    }
  }
  const logged = records.filter((r) => still.has(r.delivery.id));
  if (logged.length === 0) return;
  for (const part of chunks(logged)) await trx.insertInto('delivery_attempts').values(part.map(attemptRow)).execute();
}

/**
 * Deliveries still pending whose event was logged before `cutoff` (ms) are given up: `dead`,
 * with an attempt record that says why, so the end shows in the hook's deliveries list instead
 * of the delivery vanishing with its event. In slices of at most 500, each its own transaction,
 * other work running in between (`inSlices`); `signal` stops it between slices. Returns how many.
 *
 * Lock order: a slice locks the hooks of its deliveries first (`lockHooks`), then the
 * deliveries, as a hook's delete does. A slice knows its few hooks from the look-up, so this
 * costs one statement, and a delete (the operator's, or the retention's of disabled hooks on
 * another replica) waits for the slice rather than making it a deadlock's victim. Only the
 * deliveries still pending when locked are given up and get the record (one whose hook went
 * meanwhile has none to refer to).
 */
export async function expireDeliveries(db: Db, now: number, cutoff: number, reason: string, signal?: AbortSignal): Promise<number> {
  const { rows } = await inSlices(
    db.engine,
    async (limit) => {
      const size = Math.min(limit, 500);
      const slice = await db.transaction((trx) => expireSlice(db, trx, { now, cutoff, reason, size }));
      return { rows: slice.expired, more: slice.found === size };
    },
    signal,
  );
  return rows;
}

/** One slice of `expireDeliveries`: how many deliveries it found, and how many of them it gave up. */
async function expireSlice(
  db: Db,
  trx: Kysely<Tables>,
  { now, cutoff, reason, size }: { now: number; cutoff: number; reason: string; size: number },
): Promise<{ found: number; expired: number }> {
  const rows = await trx
    .selectFrom('deliveries as d')
    .innerJoin('events as e', 'e.seq', 'd.event_seq')
    .select(['d.id', 'd.hook_id', 'd.webhook_id', 'd.attempts', 'e.id as event_id'])
    .where('d.status', '=', 'pending')
    .where('e.created_at', '<', cutoff)
    .limit(size)
    .execute();
  if (rows.length === 0) return { found: 0, expired: 0 };
  await lockHooks(
    db.engine,
    trx,
    rows.map((r) => r.hook_id),
  );
  const ids = rows.map((r) => r.id);
  const updated = await trx
    .updateTable('deliveries')
    .set({ status: 'dead', leased_until: 0 })
    .where('id', 'in', ids)
    .where('status', '=', 'pending')
    .returning('id')
    .execute();
  const still = new Set(updated.map((r) => Number(r.id)));
  const given = rows.filter((r) => still.has(Number(r.id)));
  if (given.length === 0) return { found: rows.length, expired: 0 };
  await trx
    .insertInto('delivery_attempts')
    .values(
      given.map((r) => ({
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
  return { found: rows.length, expired: given.length };
}

/**
 * The retention's part of the queue for a slice of events past the retention, inside the event
 * log's transaction (triggers/event-log.ts `prune`): an event is kept while a delivery of it is
 * pending or was attempted since `recent` (an attempt's timestamp); the deliveries of the
 * others, and their attempts, are deleted here, so the event log can delete those events.
 * Plain look-ups by id on each table's index, a few hundred ids at a time, so every engine
 * walks the indexes whatever its statistics say. Returns the events to keep and what went.
 */
export async function dropDeliveriesOfEvents(
  trx: Kysely<Tables>,
  eventSeqs: readonly number[],
  recent: string,
): Promise<{ kept: Set<number>; deliveries: number; attempts: number }> {
  const kept = new Set<number>();
  let deliveries = 0;
  let attempts = 0;
  for (const part of chunks(eventSeqs)) {
    const found = await trx.selectFrom('deliveries').select(['id', 'event_seq', 'status']).where('event_seq', 'in', part).execute();
    for (const d of found) if (d.status === 'pending') kept.add(Number(d.event_seq));
    for (const ids of chunks(found.map((d) => d.id))) {
      const tried = await trx
        .selectFrom('delivery_attempts')
        .select('delivery_id')
        .where('delivery_id', 'in', ids)
        .where('attempted_at', '>=', recent)
        .execute();
      const recentlyTried = new Set(tried.map((a) => Number(a.delivery_id)));
      for (const d of found) if (recentlyTried.has(Number(d.id))) kept.add(Number(d.event_seq));
    }
    const doomed = found.filter((d) => !kept.has(Number(d.event_seq))).map((d) => d.id);
    for (const ids of chunks(doomed)) {
      attempts += Number((await trx.deleteFrom('delivery_attempts').where('delivery_id', 'in', ids).executeTakeFirst()).numDeletedRows);
      deliveries += Number((await trx.deleteFrom('deliveries').where('id', 'in', ids).executeTakeFirst()).numDeletedRows);
    }
  }
  return { kept, deliveries, attempts };
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
    request_headers: r.requestHeaders ? JSON.stringify(r.requestHeaders) : null,
    response_body: r.responseBody ?? null,
  };
}

import { setImmediate } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import { rowsPerStatement } from '../db/chunks.js';
import { formatMicros } from '../time/timestamps.js';
import { testEventType } from './delivery-log.js';
import { fairPlaces, fairSpacingMs, webhookId } from './fan-out.js';
import { hookWrites } from './hook-store.js';
import { trimAttempts } from './attempt-log.js';

/**
 * The deliveries an operator asks for again (docs/webhooks.md, "When something goes wrong"):
 * a resend, a recover, and the record of a test delivery. Every write is conditional (a row
 * changes only from the state it was read in) or an insert the unique (hook, event) index
 * settles, so two recovers at once, on one replica or two, make no delivery twice.
 */

/** The hook as a recover needs it. */
export interface RecoverTarget {
  id: string;
  keyHash: string;
  origin: string;
  events: readonly string[];
  /** Lower-case device ids, or null for every device. */
  deviceIds: readonly string[] | null;
  /** When the hook was created (ms): earlier events were never its to deliver. */
  createdMs: number;
  /** What a re-queued delivery's attempt log keeps (attempt-log.ts `attemptsKeptAtReset`). */
  attemptsKept: number;
}

export interface RecoverRange {
  since: number;
  until: number;
}

/** Rows read per slice, each slice its own statement (and, when writing, its own transaction). */
const slice = rowsPerStatement;
/** A replica's clock may lag another's a little: events recorded this long after `until` are still looked at. */
const clockSlackMs = 60_000;

/**
 * Where `count` deliveries of a hook join its origin's fair order (fan-out.ts): after the
 * hook's own backlog, never before the origin's virtual time. Moves the hook's cursor on.
 */
async function placeAfterBacklog(trx: Kysely<Tables>, hookId: string, count: number, now: number): Promise<number> {
  const place = (await fairPlaces(trx, [hookId])).get(hookId);
  const hook = await trx.selectFrom('hooks').select('fair_cursor').where('id', '=', hookId).executeTakeFirst();
  const virtual = place?.head ?? now;
  const start = place?.backlogged ? Math.max(virtual, Number(hook?.fair_cursor ?? 0) + fairSpacingMs) : virtual;
  await hookWrites.setFairCursor(trx, hookId, start + (count - 1) * fairSpacingMs);
  return start;
}

/**
 * Makes one more attempt of a delivery due now, with the same `webhook-id`: a finished one
 * (delivered, dead, cancelled) becomes pending with a fresh retry schedule, its attempt log
 * trimmed to `attemptsKept`; a pending one is due now (one in flight is left to finish).
 * Returns `missing` when the hook has no such delivery and `test` for a test delivery, which is
 * never sent again.
 */
export async function resendDelivery(
  db: Db,
  hookId: string,
  origin: string,
  id: number,
  now: number,
  attemptsKept: number,
): Promise<'queued' | 'missing' | 'test'> {
  return db.transaction(async (trx) => {
    const row = await trx
      .selectFrom('deliveries as d')
      .innerJoin('events as e', 'e.seq', 'd.event_seq')
      .select(['d.status', 'e.type'])
      .where('d.id', '=', id)
      .where('d.hook_id', '=', hookId)
      .executeTakeFirst();
    if (!row) return 'missing';
    if (row.type === testEventType) return 'test';
    const start = await placeAfterBacklog(trx, hookId, 1, now);
    await trx
      .updateTable('deliveries')
      .set({
        status: 'pending',
        attempts: sql`CASE WHEN status = 'pending' THEN attempts ELSE 0 END`,
        next_attempt_at: now,
        leased_until: 0,
        fair_at: start,
        target_origin: origin,
      })
      .where('id', '=', id)
      .where((eb) => eb.or([eb('status', '!=', 'pending'), eb('leased_until', '<=', now)]))
      .execute();
    if (row.status !== 'pending') await trimAttempts(trx, [id], attemptsKept);
    return 'queued';
  });
}

/**
 * A recover of `hook` over `range` (when the events were recorded), a slice at a time with a
 * turn for other work between slices: its dead (and 410-cancelled) deliveries become pending
 * with a fresh schedule, and each retained event it subscribes to that it has no delivery of
 * (logged while it was disabled or paused) gets one. `dryRun`: only counts. Returns how many
 * deliveries were (or would be) queued. `stopped` ends it between slices (a shutdown).
 */
export async function recover(
  db: Db,
  hook: RecoverTarget,
  range: RecoverRange,
  now: number,
  dryRun: boolean,
  stopped: () => boolean = () => false,
): Promise<number> {
  let count = 0;
  for (let last = 0; !stopped();) {
    await setImmediate();
    const rows = await db.kysely
      .selectFrom('deliveries as d')
      .innerJoin('events as e', 'e.seq', 'd.event_seq')
      .select(['d.id', 'd.status', 'e.type', 'e.created_at'])
      .where('d.hook_id', '=', hook.id)
      .where('d.id', '>', last)
      .orderBy('d.id')
      .limit(slice)
      .execute();
    if (rows.length === 0) break;
    last = Number(rows[rows.length - 1]!.id);
    const ids = rows
      .filter((r) => (r.status === 'dead' || r.status === 'cancelled') && r.type !== testEventType)
      .filter((r) => Number(r.created_at) >= range.since && Number(r.created_at) < range.until)
      .map((r) => Number(r.id));
    count += dryRun ? ids.length : await requeue(db, hook, ids, now);
  }
  const from = Math.max(range.since, hook.createdMs);
  for (let last = 0; !stopped();) {
    await setImmediate();
    const events = await db.kysely
      .selectFrom('events')
      .select(['seq', 'type', 'device_id', 'created_at'])
      .where('key_hash', '=', hook.keyHash)
      .where('seq', '>', last)
      .orderBy('seq')
      .limit(slice)
      .execute();
    if (events.length === 0) break;
    last = Number(events[events.length - 1]!.seq);
    const devices = hook.deviceIds ? new Set(hook.deviceIds) : null;
    const wanted = events
      .filter((e) => Number(e.created_at) >= from && Number(e.created_at) < range.until && hook.events.includes(e.type))
      // Device events by the hook's devices; an operational event never to the hook it tells of.
      .filter((e) => (e.type.startsWith('device.') ? !devices || devices.has(e.device_id) : e.device_id !== hook.id))
      .map((e) => Number(e.seq));
    count += await makeMissing(db, hook, wanted, now, dryRun);
    if (Number(events[events.length - 1]!.created_at) >= range.until + clockSlackMs) break;
  }
  return count;
}

/** Dead or cancelled deliveries back to pending (attempt logs trimmed), only from those states (a race changes nothing twice). */
async function requeue(db: Db, hook: RecoverTarget, ids: number[], now: number): Promise<number> {
  if (ids.length === 0) return 0;
  return db.transaction(async (trx) => {
    const start = await placeAfterBacklog(trx, hook.id, ids.length, now);
    const places = sql.join(ids.map((id, i) => sql`(CAST(${id} AS BIGINT), CAST(${start + i * fairSpacingMs} AS BIGINT))`));
    const { rows } = await sql<{ id: number }>`
      UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ${now}, leased_until = 0, target_origin = ${hook.origin}, fair_at = v.column2
      FROM (VALUES ${places}) AS v
      WHERE deliveries.id = v.column1 AND deliveries.status IN ('dead', 'cancelled')
      RETURNING deliveries.id`.execute(trx);
    await trimAttempts(
      trx,
      rows.map((r) => Number(r.id)),
      hook.attemptsKept,
    );
    return rows.length;
  });
}

/** A delivery of each event in `seqs` the hook has none of; the unique (hook, event) index settles races. */
async function makeMissing(db: Db, hook: RecoverTarget, seqs: number[], now: number, dryRun: boolean): Promise<number> {
  if (seqs.length === 0) return 0;
  const have = async (trx: Kysely<Tables>) =>
    new Set(
      (await trx.selectFrom('deliveries').select('event_seq').where('hook_id', '=', hook.id).where('event_seq', 'in', seqs).execute()).map((r) =>
        Number(r.event_seq),
      ),
    );
  if (dryRun) {
    const existing = await have(db.kysely);
    return seqs.filter((s) => !existing.has(s)).length;
  }
  return db.transaction(async (trx) => {
    const existing = await have(trx);
    const missing = seqs.filter((s) => !existing.has(s));
    if (missing.length === 0) return 0;
    const events = await trx.selectFrom('events').select(['seq', 'id']).where('seq', 'in', missing).execute();
    const start = await placeAfterBacklog(trx, hook.id, events.length, now);
    const made = await trx
      .insertInto('deliveries')
      .values(
        events.map((e, i) => ({
          hook_id: hook.id,
          event_seq: Number(e.seq),
          webhook_id: webhookId(hook.id, e.id),
          status: 'pending' as const,
          next_attempt_at: now,
          created_at: now,
          fair_at: start + i * fairSpacingMs,
          target_origin: hook.origin,
        })),
      )
      .onConflict((oc) => oc.columns(['hook_id', 'event_seq']).doNothing())
      .returning('id')
      .execute();
    return made.length;
  });
}

/** What a test send came to, recorded as a delivery of its event with its one attempt. */
export interface TestRecord {
  hookId: string;
  origin: string;
  eventSeq: number;
  webhookId: string;
  eventId: string;
  delivered: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: number;
  requestHeaders: Record<string, string> | null;
  responseBody: string | null;
}

/**
 * Records a test delivery, finished at once: `delivered`, or `cancelled` (shown as `failed`),
 * never pending, so no claim retries it and no recover picks it up.
 */
export async function recordTest(trx: Kysely<Tables>, t: TestRecord): Promise<number> {
  const row = await trx
    .insertInto('deliveries')
    .values({
      hook_id: t.hookId,
      event_seq: t.eventSeq,
      webhook_id: t.webhookId,
      status: t.delivered ? 'delivered' : 'cancelled',
      attempts: 1,
      next_attempt_at: t.attemptedAt,
      created_at: t.attemptedAt,
      fair_at: t.attemptedAt,
      target_origin: t.origin,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('delivery_attempts')
    .values({
      delivery_id: Number(row.id),
      hook_id: t.hookId,
      event_id: t.eventId,
      webhook_id: t.webhookId,
      attempt: 1,
      status_code: t.statusCode,
      error: t.error,
      duration_ms: Math.round(t.durationMs),
      attempted_at: formatMicros(t.attemptedAt * 1000),
      next_attempt_at: null,
      outcome: t.delivered ? 'delivered' : 'failed',
      request_headers: t.requestHeaders ? JSON.stringify(t.requestHeaders) : null,
      response_body: t.responseBody,
    })
    .execute();
  return Number(row.id);
}

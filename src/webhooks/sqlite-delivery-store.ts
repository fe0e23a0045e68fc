import { sql, type Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import { recordAttemptsIn } from './attempt-log.js';
import type { AttemptRecord, ClaimOptions, ClaimResult, Due } from './delivery-types.js';
import { leasedDue, sqliteLease, type ClaimedRow, type DeliveryStore } from './delivery-store.js';
import { retryPlace } from './fan-out.js';
import { chunks } from '../db/chunks.js';
import { inList, rowGroups, valuesOf } from '../db/in-list.js';
import { formatMicros } from '../time/timestamps.js';

/**
 * The delivery queue on SQLite (the contract: delivery-store.ts). A claim is a few statements
 * in one transaction, which holds SQLite's one writer from its start (BEGIN IMMEDIATE): no other
 * claim, here or in another process, reads the candidates until it commits, so no row is
 * leased twice without row locks. The records of a round are written first, in the same
 * transaction.
 *
 * The deliverer's statements (claim, record) are written in SQL with their lists padded to a
 * few lengths (`inList`), so each is one of a few prepared statements, and no RETURNING: on
 * SQLite it makes an UPDATE collect its rows first and cost about a third more.
 */
export class SqliteDeliveryStore implements DeliveryStore {
  constructor(private readonly db: Db) {}

  claimDue(now: number, options: ClaimOptions): Promise<ClaimResult> {
    return this.db.transaction(async (trx) => {
      const records = options.records ?? [];
      await recordIn(trx, records);
      return claimIn(trx, now, options, records);
    });
  }

  async recordOutcomes(records: AttemptRecord[]): Promise<void> {
    if (records.length > 0) await this.db.transaction((trx) => recordIn(trx, records));
  }

  /**
   * One statement per chunk; a row is still ours when its lease end is one this replica set (a
   * takeover sets a later one) and it is still pending.
   */
  async renewLeases(held: Due[], until: number): Promise<Set<number>> {
    const renewed = new Set<number>();
    for (const part of chunks(held)) {
      const rows = await this.db.kysely
        .updateTable('deliveries')
        .set(sqliteLease(until))
        .where(
          'id',
          'in',
          part.map((d) => d.id),
        )
        .where('leased_until', 'in', [...new Set(part.map((d) => d.leased_until))])
        .where('status', '=', 'pending')
        .returning('id')
        .execute();
      for (const row of rows) renewed.add(Number(row.id));
    }
    return renewed;
  }

  async releaseLeases(ids: number[], now: number): Promise<void> {
    for (const part of chunks(ids)) {
      await this.db.kysely
        .updateTable('deliveries')
        .set({ leased_until: 0, next_attempt_at: now })
        .where('id', 'in', part)
        .where('status', '=', 'pending')
        .execute();
    }
  }
}

/**
 * Leases due deliveries inside the claim's transaction. Candidates are read in fair order
 * (`fair_at`, docs/webhooks.md), at most `rooms` (or `fresh`) per origin are leased, and the
 * lease holds each delivery until its end (`leased_until`) and moves its due time there too
 * (`sqliteLease`).
 */
async function claimIn(trx: Kysely<Tables>, now: number, options: ClaimOptions, recorded: AttemptRecord[]): Promise<ClaimResult> {
  const rooms = options.rooms ?? new Map<string, number>();
  const saturated = [...rooms].filter(([, room]) => room <= 0).map(([origin]) => origin);
  // Anything due at all? One step on the due index; without it, the fair-order scan below
  // would walk every waiting retry to find out there is nothing to do.
  const { rows: anyDue } = await sql`
    SELECT id FROM deliveries WHERE status = 'pending' AND next_attempt_at <= ${now} AND leased_until <= ${now} LIMIT 1`.execute(trx);
  if (anyDue.length === 0) return { due: [], seen: 0 };
  // Candidates first, ids and origins only: some may be left for later (their origin has no
  // room), so the payloads are read for the picked ones alone. Lists travel as one JSON
  // parameter each, so the statement's text is always the same.
  const { rows: candidates } = await sql<{ id: number; target_origin: string }>`
    SELECT d.id, coalesce(h.target_origin, 'invalid') AS target_origin
    FROM deliveries d JOIN hooks h ON h.id = d.hook_id
    WHERE d.status = 'pending'
      -- The + keeps the planner off the due index here: the scan follows deliveries_fair
      -- (status, fair_at, next_attempt_at) in fair order, checking dueness in the index
      -- (a leased row's due time is its lease's end), instead of sorting every due row.
      AND +d.next_attempt_at <= ${now}
      AND d.leased_until <= ${now}
      AND h.status != 'disabled'
      -- Origins whose lane is full, and rows recorded in this transaction (not claimed by it, as on PostgreSQL).
      AND coalesce(h.target_origin, 'invalid') NOT IN (SELECT value FROM json_each(${JSON.stringify(saturated)}))
      AND d.id NOT IN (SELECT value FROM json_each(${JSON.stringify(recorded.map((r) => r.delivery.id))}))
    -- Fair across hooks: in the order of their virtual times (webhooks/fan-out.ts), so one
    -- hook's backlog delays only that hook.
    ORDER BY d.fair_at, d.id
    LIMIT ${options.limit}`.execute(trx);
  const fresh = options.fresh ?? options.limit;
  const taken = new Map<string, number>();
  const ids = candidates
    .filter((d) => {
      const count = taken.get(d.target_origin) ?? 0;
      if (count >= (rooms.get(d.target_origin) ?? fresh)) return false;
      taken.set(d.target_origin, count + 1);
      return true;
    })
    .map((d) => Number(d.id));
  if (ids.length === 0) return { due: [], seen: 0 };
  const until = now + options.leaseMs;
  const lease = sqliteLease(until);
  const due: Due[] = [];
  for (const part of chunks(ids)) {
    await sql`UPDATE deliveries SET leased_until = ${lease.leased_until}, next_attempt_at = ${lease.next_attempt_at} WHERE id IN ${inList(part)}`.execute(trx);
    const { rows } = await sql<ClaimedRow>`
      SELECT d.id, d.hook_id, d.webhook_id, d.attempts, h.target_url, coalesce(h.target_origin, 'invalid') AS target_origin,
        h.secret_cipher, h.secret_previous_cipher, h.secret_previous_until,
        e.id AS event_id, e.type, e.occurred_at, e.payload, d.fair_at
      FROM deliveries d JOIN hooks h ON h.id = d.hook_id JOIN events e ON e.seq = d.event_seq
      WHERE d.id IN ${inList(part)}`.execute(trx);
    for (const r of rows) due.push(leasedDue(r, until));
  }
  due.sort((a, b) => a.fair_at - b.fair_at || a.id - b.id);
  return { due, seen: candidates.length };
}

/**
 * Records finished attempts inside the caller's transaction (the contract: delivery-store.ts
 * `recordOutcomes`). A batch with a 410 among it (the hook disabled, its queue cancelled) is
 * rare and goes through attempt-log.ts. Otherwise: which deliveries are still at the attempt
 * before each record (the transaction holds SQLite's one writer, so that holds until it ends),
 * then their new state, one statement per outcome and attempt number for delivered and dead
 * (a batch mostly shares both) and one per retry, then their lines in the attempt log, in
 * groups of a few fixed sizes (`rowGroups`).
 */
async function recordIn(trx: Kysely<Tables>, records: AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  if (records.some((r) => r.outcome === 'disabled')) return recordAttemptsIn(trx, records);
  const applies: AttemptRecord[] = [];
  for (const part of chunks(records)) {
    const { rows } = await sql<{ id: number; attempts: number }>`
      SELECT id, attempts FROM deliveries WHERE id IN ${inList(part.map((r) => r.delivery.id))}`.execute(trx);
    const at = new Map(rows.map((r) => [Number(r.id), Number(r.attempts)]));
    for (const r of part) if (at.get(r.delivery.id) === r.attempt - 1) applies.push(r);
  }
  if (applies.length === 0) return;
  const groups = new Map<string, AttemptRecord[]>();
  for (const r of applies) {
    if (r.outcome === 'retrying') {
      // A retry takes its place its delay after the origin's virtual time (fan-out.ts); a cancelled delivery stays cancelled.
      const next = r.nextAttemptAt ?? r.attemptedAt;
      await sql`
        UPDATE deliveries SET status = CASE WHEN status = 'cancelled' THEN status ELSE 'pending' END, attempts = ${r.attempt},
          next_attempt_at = ${next}, fair_at = ${retryPlace('deliveries', r.attemptedAt, next - r.attemptedAt)}, leased_until = 0
        WHERE id = ${r.delivery.id}`.execute(trx);
      continue;
    }
    const key = `${r.outcome} ${r.attempt}`;
    const group = groups.get(key);
    if (group) group.push(r);
    else groups.set(key, [r]);
  }
  for (const group of groups.values()) {
    const { outcome, attempt } = group[0]!;
    for (const part of chunks(group))
      await sql`
        UPDATE deliveries SET status = CASE WHEN status = 'cancelled' THEN status ELSE ${outcome} END, attempts = ${attempt}, leased_until = 0
        WHERE id IN ${inList(part.map((r) => r.delivery.id))}`.execute(trx);
  }
  for (const group of rowGroups(applies))
    await sql`
      INSERT INTO delivery_attempts (delivery_id, hook_id, event_id, webhook_id, attempt, status_code, error, duration_ms, attempted_at,
        next_attempt_at, outcome, request_headers, response_body)
      VALUES ${valuesOf(group.map(attemptLine))}`.execute(trx);
}

/** One attempt log line, in the column order of `recordIn`'s insert. */
function attemptLine(r: AttemptRecord): unknown[] {
  return [
    r.delivery.id,
    r.delivery.hook_id,
    r.delivery.event_id,
    r.delivery.webhook_id,
    r.attempt,
    r.statusCode,
    r.error,
    Math.round(r.durationMs),
    formatMicros(r.attemptedAt * 1000),
    r.nextAttemptAt === null ? null : formatMicros(r.nextAttemptAt * 1000),
    r.outcome,
    r.requestHeaders ? JSON.stringify(r.requestHeaders) : null,
    r.responseBody ?? null,
  ];
}

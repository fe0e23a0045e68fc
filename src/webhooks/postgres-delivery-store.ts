import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import { formatMicros } from '../time/timestamps.js';
import { recordAttemptsIn } from './attempt-log.js';
import type { AttemptRecord, ClaimOptions, ClaimResult, Due } from './delivery-types.js';
import { leasedDue, type DeliveryStore } from './delivery-store.js';
import { retryPlace } from './fan-out.js';

/**
 * The delivery queue on PostgreSQL (the contract: delivery-store.ts): the deliverer's work in
 * one statement per round, the finished attempts recorded (each delivery's new state and its
 * attempt log line) and the next due deliveries leased, with what it takes to send them. One
 * statement is one transaction and one round trip, however many deliveries it carries; every
 * list travels as one array parameter, so the statement's text (and the work of building it)
 * does not grow with the batch. Candidates are locked with `FOR UPDATE SKIP LOCKED`, so
 * replicas claiming at once lease disjoint rows without waiting for each other.
 *
 * A batch with a 410 among it (the hook disabled, its queue cancelled) is rare: it is written
 * by the Kysely statements of attempt-log.ts, in a transaction of its own, before the claim.
 *
 * Lock order (docs/webhooks.md, "Durability"): a record, a renewal and a release lock their
 * deliveries' hooks first, in id order (`FOR KEY SHARE`; `FOR NO KEY UPDATE` for a batch with a
 * 410, which disables its hook), then the deliveries, as deleting a hook does (its row, then its
 * deliveries by cascade): they and a delete wait for one another instead of each holding what
 * the other needs.
 */
export class PostgresDeliveryStore implements DeliveryStore {
  constructor(private readonly db: Db) {}

  async claimDue(now: number, options: ClaimOptions): Promise<ClaimResult> {
    const records = options.records ?? [];
    const refused = await this.recordRefusals(records);
    const { due, seen } = await pgClaim(this.db.kysely, now, options, refused ? [] : records, records);
    return { due, seen };
  }

  async recordOutcomes(records: AttemptRecord[]): Promise<void> {
    if (records.length > 0 && !(await this.recordRefusals(records))) await pgRecord(this.db.kysely, records);
  }

  /**
   * One statement: the held deliveries' hooks locked first, in id order (`FOR KEY SHARE`), then
   * the lease alone moved on, a heap-only update (delivery-store.ts). Without the hooks first a
   * hook's delete could make the renewal a deadlock's victim, and the lease lapse while the
   * delivery is in flight (sent twice); with them, the delete waits or is waited for.
   */
  async renewLeases(held: Due[], until: number): Promise<Set<number>> {
    if (held.length === 0) return new Set();
    const { rows } = await sql<{ id: string }>`
      WITH held AS MATERIALIZED (${lockedHooks(held.map((d) => d.hook_id))})
      UPDATE deliveries SET leased_until = ${until}
      WHERE id = ANY(${held.map((d) => d.id)}::bigint[])
        -- Still ours: its lease ends where this replica set it (a takeover sets a later end).
        AND leased_until = ANY(${[...new Set(held.map((d) => d.leased_until))]}::bigint[])
        AND status = 'pending'
        ${afterHooks}
      RETURNING id`.execute(this.db.kysely);
    return new Set(rows.map((r) => Number(r.id)));
  }

  /** One statement, the deliveries' hooks locked first, as `renewLeases`. */
  async releaseLeases(ids: number[], now: number): Promise<void> {
    if (ids.length === 0) return;
    await sql`
      WITH held AS MATERIALIZED (${lockedHooks(sql`(SELECT hook_id FROM deliveries WHERE id = ANY(${ids}::bigint[]))`)})
      UPDATE deliveries SET leased_until = 0, next_attempt_at = ${now}
      WHERE id = ANY(${ids}::bigint[]) AND status = 'pending'
        ${afterHooks}`.execute(this.db.kysely);
  }

  /** A batch with a 410 among it is written through attempt-log.ts (true: it was). */
  private async recordRefusals(records: AttemptRecord[]): Promise<boolean> {
    if (!records.some((r) => r.outcome === 'disabled')) return false;
    await this.db.transaction(async (trx) => {
      await sql`SELECT id FROM hooks WHERE id = ANY(${hookIds(records)}::text[]) ORDER BY id FOR NO KEY UPDATE`.execute(trx);
      await recordAttemptsIn(trx, records);
    });
    return true;
  }
}

const recordColumns = (records: AttemptRecord[]) => ({
  ids: records.map((r) => r.delivery.id),
  attempts: records.map((r) => r.attempt),
  outcomes: records.map((r) => r.outcome),
  nextAt: records.map((r) => r.nextAttemptAt),
  at: records.map((r) => r.attemptedAt),
  hooks: records.map((r) => r.delivery.hook_id),
  events: records.map((r) => r.delivery.event_id),
  webhookIds: records.map((r) => r.delivery.webhook_id),
  codes: records.map((r) => r.statusCode),
  errors: records.map((r) => r.error),
  durations: records.map((r) => Math.round(r.durationMs)),
  attemptedAt: records.map((r) => formatMicros(r.attemptedAt * 1000)),
  nextAtText: records.map((r) => (r.nextAttemptAt === null ? null : formatMicros(r.nextAttemptAt * 1000))),
  requestHeaders: records.map((r) => (r.requestHeaders ? JSON.stringify(r.requestHeaders) : null)),
  responses: records.map((r) => r.responseBody ?? null),
});

/** The records' hooks, each once, in id order: the order their rows are locked in. */
const hookIds = (records: AttemptRecord[]): string[] => [...new Set(records.map((r) => r.delivery.hook_id))].sort();

/** The hooks `ids` (a list, or a subquery of hook ids) locked `FOR KEY SHARE`, in id order: a CTE's body. */
function lockedHooks(ids: string[] | RawBuilder<unknown>): RawBuilder<unknown> {
  const among = Array.isArray(ids) ? sql`ANY(${[...new Set(ids)].sort()}::text[])` : sql`ANY(ARRAY${ids})`;
  return sql`SELECT id FROM hooks WHERE id = ${among} ORDER BY id FOR KEY SHARE`;
}

/**
 * A condition of an UPDATE after `held AS MATERIALIZED (lockedHooks)`: it reads no column, so the
 * planner checks it once, before the scan yields its first row, and every hook row is locked
 * before the first delivery row is.
 */
const afterHooks = sql`AND (SELECT count(*) FROM held) >= 0`;

/**
 * `held`, `rec`, `done` and `logged`: the records' hooks locked, then the records applied and
 * logged. `rec` yields nothing before `held` has run to its end (an InitPlan), so every hook
 * row is locked before the first delivery row is.
 */
function recordCtes(records: AttemptRecord[]): RawBuilder<unknown> {
  const c = recordColumns(records);
  return sql`
    held AS MATERIALIZED (${lockedHooks(hookIds(records))}),
    rec AS (
      SELECT * FROM unnest(${c.ids}::bigint[], ${c.attempts}::int[], ${c.outcomes}::text[], ${c.nextAt}::bigint[], ${c.at}::bigint[])
        AS r(id, attempt, outcome, next_at, at)
      WHERE (SELECT count(*) FROM held) >= 0
    ),
    done AS (
      UPDATE deliveries d SET
        status = CASE WHEN d.status = 'cancelled' THEN d.status WHEN r.outcome = 'retrying' THEN 'pending' ELSE r.outcome END,
        attempts = r.attempt,
        next_attempt_at = coalesce(r.next_at, d.next_attempt_at),
        -- A retry takes its place its delay after the origin's virtual time (fan-out.ts).
        fair_at = CASE WHEN r.next_at IS NULL THEN d.fair_at ELSE ${retryPlace('d', sql`r.at`, sql`r.next_at - r.at`)} END,
        leased_until = 0
      FROM rec r
      WHERE d.id = r.id AND d.id = ANY(${c.ids}::bigint[]) AND d.attempts = r.attempt - 1
      RETURNING d.id
    ),
    logged AS (
      INSERT INTO delivery_attempts (delivery_id, hook_id, event_id, webhook_id, attempt, status_code, error, duration_ms, attempted_at, next_attempt_at, outcome,
          request_headers, response_body)
      SELECT l.* FROM unnest(${c.ids}::bigint[], ${c.hooks}::text[], ${c.events}::text[], ${c.webhookIds}::text[], ${c.attempts}::int[],
          ${c.codes}::int[], ${c.errors}::text[], ${c.durations}::int[], ${c.attemptedAt}::text[], ${c.nextAtText}::text[], ${c.outcomes}::text[],
          ${c.requestHeaders}::text[], ${c.responses}::text[])
        AS l(delivery_id, hook_id, event_id, webhook_id, attempt, status_code, error, duration_ms, attempted_at, next_attempt_at, outcome,
          request_headers, response_body)
      WHERE l.delivery_id IN (SELECT id FROM done)
      RETURNING hook_id
    )`;
}

/** Records `records` (no 410 among them); returns how many attempts were logged per hook. */
async function pgRecord(db: Kysely<Tables>, records: AttemptRecord[]): Promise<Map<string, number>> {
  const { rows } = await sql<{ hook_id: string; n: string }>`
    WITH ${recordCtes(records)}
    SELECT hook_id, count(*) AS n FROM logged GROUP BY hook_id`.execute(db);
  return new Map(rows.map((r) => [r.hook_id, Number(r.n)]));
}

/**
 * Records `records` (no 410 among them) and leases the next due deliveries, in one statement;
 * the deliveries of `recordedNow` (the round's records, written here or just before) are not leased.
 */
async function pgClaim(
  db: Kysely<Tables>,
  now: number,
  options: ClaimOptions,
  records: AttemptRecord[],
  recordedNow: AttemptRecord[],
): Promise<ClaimResult & { logged: Map<string, number> }> {
  const rooms = [...(options.rooms ?? new Map<string, number>())];
  const saturated = rooms.filter(([, room]) => room <= 0).map(([origin]) => origin);
  const fresh = options.fresh ?? options.limit;
  const until = now + options.leaseMs;
  const recorded = recordedNow.map((r) => r.delivery.id);
  const { rows } = await sql<
    Omit<Due, 'fair_at' | 'secret_previous_until'> & {
      fair_at: string;
      secret_previous_until: string | null;
      seen: string;
      logged: Array<[string, string]> | null;
    }
  >`
    WITH ${recordCtes(records)},
    cand AS (
      SELECT d.id, d.fair_at, coalesce(h.target_origin, 'invalid') AS origin
      FROM deliveries d JOIN hooks h ON h.id = d.hook_id
      WHERE d.status = 'pending'
        -- \`+\` keeps the planner on deliveries_pending_fair, in fair order (see delivery-queue.ts).
        AND +d.next_attempt_at <= ${now}
        -- Leased (in flight): checked on the row, which the lock reads anyway.
        AND d.leased_until <= ${now}
        AND h.status <> 'disabled'
        AND coalesce(h.target_origin, 'invalid') <> ALL(${saturated}::text[])
        -- Rows recorded by this statement are not claimed by it (one row, one change).
        AND d.id <> ALL(${recorded}::bigint[])
        -- Nothing due at all: a few steps on the due index (past the leased rows, checked on
        -- the row) instead of walking waiting retries; the order keeps the planner on it.
        AND (SELECT x.id FROM deliveries x WHERE x.status = 'pending' AND x.next_attempt_at <= ${now} AND x.leased_until <= ${now}
          ORDER BY x.next_attempt_at LIMIT 1) IS NOT NULL
      ORDER BY d.fair_at, d.id
      LIMIT ${options.limit}
      FOR UPDATE OF d SKIP LOCKED
    ),
    picked AS (
      SELECT c.id FROM (
        SELECT id, origin, row_number() OVER (PARTITION BY origin ORDER BY fair_at, id) AS n FROM cand
      ) c
      LEFT JOIN unnest(${rooms.map(([o]) => o)}::text[], ${rooms.map(([, r]) => r)}::int[]) AS room(origin, n) ON room.origin = c.origin
      WHERE c.n <= coalesce(room.n, ${fresh})
    ),
    leased AS (
      -- leased_until alone: no indexed column changes, so the new row version is a HOT update.
      UPDATE deliveries d SET leased_until = ${until}
      FROM picked p, hooks h, events e
      WHERE d.id = p.id AND h.id = d.hook_id AND e.seq = d.event_seq
      RETURNING d.id, d.hook_id, d.webhook_id, d.attempts, h.target_url, coalesce(h.target_origin, 'invalid') AS target_origin,
        h.secret_cipher, h.secret_previous_cipher, h.secret_previous_until, e.id AS event_id, e.type, e.occurred_at, e.payload, d.fair_at
    ),
    counts AS (SELECT (SELECT count(*) FROM cand) AS seen,
      (SELECT json_agg(json_build_array(hook_id, n)) FROM (SELECT hook_id, count(*) AS n FROM logged GROUP BY hook_id) g) AS logged)
    SELECT l.*, counts.seen, counts.logged FROM counts LEFT JOIN leased l ON true
    ORDER BY l.fair_at, l.id`.execute(db);
  const head = rows[0];
  const logged = new Map((head?.logged ?? []).map(([hook, n]) => [hook, Number(n)]));
  const due = rows.filter((r) => r.id !== null).map(({ seen: _s, logged: _l, ...r }) => leasedDue(r, until));
  return { due, seen: due.length > 0 ? Number(head!.seen) : 0, logged };
}

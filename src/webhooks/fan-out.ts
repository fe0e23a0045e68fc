import { setImmediate } from 'node:timers/promises';
import { sql, type Insertable, type Kysely, type RawBuilder } from 'kysely';
import type { DeviceEvent } from '../catalog/event.js';
import { chunks, inChunks } from '../db/chunks.js';
import type { Tables } from '../db/tables.js';
import { hookWrites } from './hook-store.js';

/**
 * How far apart, in virtual time, one hook's queued deliveries are placed (docs/webhooks.md,
 * "Fairness"). Within a target origin, due deliveries are claimed in `fair_at` order, start-time
 * fair queueing: the origin's virtual time is the smallest `fair_at` among its pending
 * deliveries (now when it has none); a hook with nothing queued places its next delivery at
 * that time, a hook with a backlog after its own last one (and never before that time). So a
 * hook that queues 10,000 deliveries at once spreads them over 10,000 s of virtual time, and
 * another hook's delivery queued meanwhile comes after at most one of them, however long the
 * backlog and however far its virtual time fell behind the wall clock (a receiver answering
 * slower than one delivery a second). It orders only: when a delivery is due stays
 * `next_attempt_at`.
 */
export const fairSpacingMs = 1_000;

/** Stable per hook and event, so every retry of one event to one hook carries the same id. */
export function webhookId(hookId: string, eventId: string): string {
  return `msg_${hookId.replace(/^hook_/, '')}_${eventId.replace(/^evt_/, '')}`;
}

/**
 * What the fan-out needs of an event: a device-status event, or an operational one (its
 * `about`: the hook it tells of, which is never sent it).
 */
export type FannedEvent = { id: string; type: DeviceEvent['type'] | string; device?: { id: string }; about?: string };

/**
 * Queues a delivery of each new event to every matching active hook of the key (the fan-out),
 * inside the transaction that logged the events. `seqOf` maps event ids to their log position.
 * A hook's `device_ids` filter device events only. Operational events also go to paused hooks:
 * a pause stops the key's watch, not its deliveries, and an upstream's pause pauses every hook
 * of the key at once (their `hook.disabled` notices would otherwise reach no one).
 */
export async function queueDeliveries(trx: Kysely<Tables>, keyHash: string, events: FannedEvent[], seqOf: Map<string, number>, now: number): Promise<void> {
  const hooks = await trx
    .selectFrom('hooks')
    .select(['id', 'status', 'events', 'device_ids', 'fair_cursor', 'target_origin'])
    .where('key_hash', '=', keyHash)
    .where('status', 'in', ['active', 'paused'])
    .execute();
  const matching = hooks
    .map((hook) => {
      const types = JSON.parse(hook.events) as string[];
      const devices = hook.device_ids ? new Set(JSON.parse(hook.device_ids) as string[]) : null;
      const wanted = (event: FannedEvent) => (event.device ? hook.status === 'active' && (!devices || devices.has(event.device.id)) : event.about !== hook.id);
      return { hook, events: events.filter((event) => types.includes(event.type) && wanted(event)) };
    })
    .filter((m) => m.events.length > 0);
  if (matching.length === 0) return;
  const places = await fairPlaces(
    trx,
    matching.map((m) => m.hook.id),
  );
  const deliveries: Array<Insertable<Tables['deliveries']>> = [];
  for (const { hook, events: due } of matching) {
    const place = places.get(hook.id);
    // The origin's virtual time; a hook with a backlog continues after it, never before that time.
    const virtual = place?.head ?? now;
    const start = place?.backlogged ? Math.max(virtual, Number(hook.fair_cursor) + fairSpacingMs) : virtual;
    const origin = originOf(hook.target_origin);
    due.forEach((event, i) =>
      deliveries.push({
        hook_id: hook.id,
        event_seq: seqOf.get(event.id)!,
        webhook_id: webhookId(hook.id, event.id),
        status: 'pending' as const,
        next_attempt_at: now,
        created_at: now,
        fair_at: start + i * fairSpacingMs,
        target_origin: origin,
      }),
    );
    await hookWrites.setFairCursor(trx, hook.id, start + (due.length - 1) * fairSpacingMs);
  }
  for (const [i, part] of chunks(deliveries).entries()) {
    // Thousands of deliveries are many slices: other requests run in between (SQLite answers
    // synchronously). Not before the first: a yield inside the transaction holds SQLite's one
    // writer for a whole turn of the event loop, and a poll that queues a few deliveries would
    // hold it that long for nothing (a mass outage over many keys is one such poll per key).
    if (i > 0) await setImmediate();
    await trx
      .insertInto('deliveries')
      .values(part)
      .onConflict((oc) => oc.columns(['hook_id', 'event_seq']).doNothing())
      .execute();
  }
}

/**
 * PostgreSQL: `queueDeliveries` for device events as items of the `WITH` of the event log's one
 * statement for a poll's record (event-log.ts), so a record is one round trip. `logged` names
 * the item that lists the events just logged (`seq`, `id`, `type`, `device_id`, and `ord`, their
 * order in the poll). The same rules in SQL: each active hook of the key whose `events` list the
 * type and whose `device_ids` (if any) the device gets a delivery, placed as `fairPlaces` and
 * the loop above place it (read before the statement's own writes, as there), and the hook's
 * cursor moves to its last one. The cursor is written before the deliveries are inserted (the
 * insert reads the update's rows), the order of the transaction it replaces: the hook's row
 * is locked before its deliveries are added.
 */
export function queueDeliveriesSql(keyHash: string, logged: string, now: number): RawBuilder<unknown> {
  const at = sql`${now}::bigint`;
  return sql`fan_hooks AS (
      SELECT h.id, h.fair_cursor, coalesce(h.target_origin, 'invalid') AS origin, h.events::jsonb AS types, h.device_ids::jsonb AS devices,
        (SELECT min(d.fair_at) FROM deliveries d WHERE d.hook_id = h.id AND d.status = 'pending') AS own,
        (SELECT min(o.fair_at) FROM deliveries o WHERE o.status = 'pending' AND o.target_origin = coalesce(h.target_origin, 'invalid')) AS head
      FROM hooks h WHERE h.key_hash = ${keyHash} AND h.status = 'active'
    ),
    fan_placed AS (
      SELECT fh.id AS hook_id, fh.origin, l.seq, l.id AS event_id,
        row_number() OVER (PARTITION BY fh.id ORDER BY l.ord) - 1 AS i,
        count(*) OVER (PARTITION BY fh.id) AS n,
        CASE WHEN fh.own IS NOT NULL THEN greatest(coalesce(fh.head, ${at}), fh.fair_cursor + ${fairSpacingMs}) ELSE coalesce(fh.head, ${at}) END AS start
      FROM fan_hooks fh JOIN ${sql.table(logged)} l ON fh.types ? l.type AND (fh.devices IS NULL OR fh.devices ? l.device_id)
    ),
    fan_cursors AS (SELECT DISTINCT hook_id, start + (n - 1) * ${fairSpacingMs} AS cursor FROM fan_placed),
    fan_cursored AS (${hookWrites.setFairCursorsSql('fan_cursors')}),
    fan_queued AS (
      INSERT INTO deliveries (hook_id, event_seq, webhook_id, status, next_attempt_at, created_at, fair_at, target_origin)
      SELECT p.hook_id, p.seq, 'msg_' || regexp_replace(p.hook_id, '^hook_', '') || '_' || regexp_replace(p.event_id, '^evt_', ''),
        'pending', ${at}, ${at}, p.start + p.i * ${fairSpacingMs}, p.origin
      FROM fan_placed p JOIN fan_cursored c ON c.id = p.hook_id
      ORDER BY p.hook_id, p.i
      ON CONFLICT (hook_id, event_seq) DO NOTHING
    )`;
}

/** A hook's origin as the claims see it (`invalid` for a hook stored without one). */
const originOf = (origin: string | null): string => origin ?? 'invalid';

/**
 * Per hook: whether it has deliveries pending, and its origin's virtual time (the smallest
 * `fair_at` pending there, across every key's hooks; null when nothing is). One statement of
 * two index steps per hook, whatever the backlogs: the smallest pending `fair_at` of the hook
 * (`deliveries_hook_head`) and of its origin (`deliveries_origin_head`, pending deliveries
 * only). Both are `min()` on an index both engines take for it however skewed their
 * statistics (an `EXISTS` was planned as a sequential scan by PostgreSQL when one hook held
 * most rows). It reads without locking: two replicas fanning out to one origin at once may
 * both take the same virtual time, which costs a little fairness (their deliveries interleave
 * as if queued together), never a delivery, since `fair_at` only orders.
 */
export async function fairPlaces(trx: Kysely<Tables>, hookIds: string[]): Promise<Map<string, { backlogged: boolean; head: number | null }>> {
  // The literal 'pending' is what lets both engines take the partial index.
  const rows = await inChunks(hookIds, (ids) =>
    trx
      .selectFrom('hooks as h')
      .select([
        'h.id',
        sql<number | string | null>`(SELECT min(d.fair_at) FROM deliveries d WHERE d.hook_id = h.id AND d.status = 'pending')`.as('own'),
        sql<
          number | string | null
        >`(SELECT min(o.fair_at) FROM deliveries o WHERE o.status = 'pending' AND o.target_origin = coalesce(h.target_origin, 'invalid'))`.as('head'),
      ])
      .where('h.id', 'in', ids)
      .execute(),
  );
  return new Map(rows.map((r) => [r.id, { backlogged: r.own !== null, head: r.head === null ? null : Number(r.head) }]));
}

/**
 * Where a retry takes its place (docs/webhooks.md, "Fairness"): its delay after its origin's
 * virtual time, never before its own place. After a backlog that fell behind the wall clock it
 * so waits its delay, not that lag as well; where the origin keeps up, that is at or after its
 * due time, as before, so the claim's walk in fair order meets due deliveries before waiting
 * retries. Where the origin lags, a retry with a shorter delay than the lag waits among that
 * origin's lagging backlog, which the walk passes over anyway while the origin's lane is full.
 * `row` names the delivery being updated (a table name or alias), `at` when the attempt was
 * made, `delay` how long until the retry is due (ms).
 */
export function retryPlace(row: string, at: RawBuilder<unknown> | number, delay: RawBuilder<unknown> | number): RawBuilder<number> {
  const own = sql.ref(`${row}.fair_at`);
  const place = sql`coalesce((SELECT min(o.fair_at) FROM deliveries o WHERE o.status = 'pending' AND o.target_origin = ${sql.ref(`${row}.target_origin`)}), ${at}) + ${delay}`;
  return sql<number>`CASE WHEN ${own} < ${place} THEN ${place} ELSE ${own} END`;
}

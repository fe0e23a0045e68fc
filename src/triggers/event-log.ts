import { setImmediate } from 'node:timers/promises';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import { chunks, rowsPerStatement } from '../db/chunks.js';
import { inSlices } from '../db/slices.js';
import { watchWrites, type PollLease } from './watches.js';
import { AppError } from '../errors.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import { eventTypes, type DeviceEvent } from './transitions.js';
import { snapshotWrites } from './snapshots.js';
import type { PruneCounts, RecentFilter, SnapshotChanges } from './event-log-types.js';
import { countEventsByPeriod } from './event-counts.js';
import type { EventDeliveries, QueueDeliveries } from './event-deliveries.js';
import type { RequestWaits } from '../db/wait-budget.js';
import { requestView } from '../db/request-view.js';
import { TransactionBatch } from '../db/transaction-batch.js';
import { recordInOneStatement } from './poll-record.js';

/** Status-change log lines written before other work gets a turn. */
const logLinesPerSlice = 200;

/** How long events (and, through them, finished deliveries and disabled hooks) are kept. */
export const retentionMs = 7 * 86_400_000;

export { LeaseLostError, type PollLease } from './watches.js';
export type { PruneCounts, RecentFilter, SnapshotChanges } from './event-log-types.js';

/**
 * The per-key event log and the poller's snapshot writes. Events are stored as their JSON,
 * so reads splice stored text into the response instead of re-serialising.
 */
export class EventLog {
  /** SQLite: the polls' records, each in a savepoint of a transaction shared with the others of its turn (TransactionBatch.forPolls). */
  private readonly batch: TransactionBatch | null;

  /** With a logger, every status change recorded is logged at info: type, device id, event id. */
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly deliveries: EventDeliveries,
    private readonly logger?: Logger,
  ) {
    this.batch = TransactionBatch.forPolls(db);
  }

  /** This store as one request uses it: its database waits share the request's deadline (db/wait-budget.ts). */
  within(waits: RequestWaits | undefined): this {
    return requestView(this, this.db, waits);
  }

  /**
   * In one transaction: the new snapshot (devices new to it, gone from it or whose status
   * changed: a heartbeat alone writes nothing, so a live fleet of 100,000 screens costs no
   * write per poll; a row keeps the heartbeat of its device's last status change), the new events (an id already
   * logged for the key is ignored, so a transition seen by two replicas is one event), a
   * delivery per matching active hook, the baseline mark and the key's next poll time.
   * Returns the events that were new. Throws LeaseLostError, writing nothing, when the lease
   * named in `lease` is no longer held.
   */
  async record(keyHash: string, changes: SnapshotChanges, events: DeviceEvent[], baseline: boolean, lease: PollLease): Promise<DeviceEvent[]> {
    const now = this.clock.now();
    if (!baseline && changes.changed.length === 0 && changes.vanished.length === 0 && events.length === 0) {
      // Nothing changed (most polls of a live fleet): one statement, the key's schedule.
      const finish = (trx: Kysely<Tables>) => watchWrites.finishPoll(trx, keyHash, lease, null, changes.digest);
      await (this.batch ? this.batch.run(finish) : finish(this.db.kysely));
      return [];
    }
    const write = async (trx: Kysely<Tables>) => {
      await watchWrites.finishPoll(trx, keyHash, lease, baseline ? now : null, changes.digest);
      await snapshotWrites.write(trx, keyHash, changes.changed, changes.vanished, now);
      return events.length > 0 ? insertEvents(trx, keyHash, events, now, this.deliveries.queue) : [];
    };
    const record = { keyHash, changes, events, baselineAt: baseline ? now : null, lease, now };
    const queueSql = this.deliveries.queueSql;
    // PostgreSQL (the fan-out in SQL given): one statement (poll-record.ts) up to 500 rows; a
    // bigger record (a big key's mass outage) in slices of a transaction, other work running in
    // between (as one statement, 10,000 events held the event loop 0.7 s: bench row 7). SQLite:
    // with the other records of this turn of the event loop, in one transaction (group commit).
    const rows = events.length + changes.changed.length + changes.vanished.length;
    const fresh =
      queueSql && rows <= rowsPerStatement
        ? await recordInOneStatement(this.db.kysely, record, { events: eventWrites.insertSql, deliveries: queueSql })
        : await (this.batch ? this.batch.run(write) : this.db.transaction(write));
    // After the commit: a logged change is a recorded one. Never the key, not even its hash.
    // A mass outage is thousands of lines: written in slices, other work runs in between.
    for (const [i, part] of chunks(fresh, logLinesPerSlice).entries()) {
      if (i > 0) await setImmediate();
      for (const event of part) this.logger?.info({ type: event.type, deviceId: event.device.id, eventId: event.id }, 'device status changed');
    }
    // A mass outage: fresh planner statistics before the deliverer claims. Without them
    // PostgreSQL's claim sorts every pending delivery instead of walking its index (docs/webhooks.md).
    // A big key's baseline likewise: without statistics its next polls' look-ups by id scan the
    // key's whole snapshot instead of probing the index (36 ms a page of 1,000 instead of 7).
    const refresh = async (tables: Array<keyof Tables>, rows: number) =>
      this.db
        .refreshStatistics(tables, rows)
        .catch((err: unknown) => this.logger?.warn({ err: (err as Error).message, tables }, 'could not refresh the planner statistics'));
    await refresh(['deliveries', 'events'], fresh.length);
    await refresh(['device_snapshots'], changes.written + changes.vanished.length);
    return fresh;
  }

  /** Newest first (the polling trigger). */
  async recent(keyHash: string, filter: RecentFilter): Promise<string[]> {
    const rows = await this.db.kysely
      .selectFrom('events')
      .select('payload')
      .where('key_hash', '=', keyHash)
      // Device-status events only: the log also holds test deliveries' events.
      .where('type', 'in', filter.types ?? [...eventTypes])
      .$if(filter.devices !== undefined, (q) => q.where('device_id', 'in', filter.devices!))
      .orderBy('seq', 'desc')
      .limit(filter.limit)
      .execute();
    return rows.map((r) => r.payload);
  }

  /**
   * Oldest first, after the event `afterId` (replay). An unknown id is a 400 naming `after`.
   * `types`: device-status events unless others are named (operational events).
   */
  async after(keyHash: string, afterId: string | undefined, limit: number, types: readonly string[] = eventTypes): Promise<string[]> {
    let seq = 0;
    if (afterId !== undefined) {
      const found = await this.db.kysely.selectFrom('events').select('seq').where('key_hash', '=', keyHash).where('id', '=', afterId).executeTakeFirst();
      if (found === undefined) {
        const message = 'after must be the id of an event in your log (events are kept 7 days)';
        throw new AppError('validation', message, [{ path: 'after', message }]);
      }
      seq = found.seq;
    }
    const rows = await this.db.kysely
      .selectFrom('events')
      .select('payload')
      .where('key_hash', '=', keyHash)
      .where('seq', '>', seq)
      .where('type', 'in', [...types])
      .orderBy('seq')
      .limit(limit)
      .execute();
    return rows.map((r) => r.payload);
  }

  /** Events per type per period of `occurred_at` (event-counts.ts). */
  summary(
    keyHash: string,
    filter: { types: string[]; periodLength: 10 | 13; from: string; until: string },
  ): Promise<Array<{ period: string; type: string; count: number }>> {
    return countEventsByPeriod(this.db, keyHash, filter);
  }

  /**
   * Drops events past the 7-day retention, with their finished deliveries and attempts. An event
   * is kept while a delivery of it is pending, or was attempted within the retention (so a
   * delivery's end, `dead` included, stays in its hook's deliveries list for 7 days).
   *
   * In slices along the event sequence, each its own short transaction, other work running in
   * between (`inSlices`): half a million events are hundreds of slices, never one statement that
   * holds the event loop (SQLite) or its locks (PostgreSQL) for seconds. `signal` stops it
   * between slices; the rest goes at the next sweep.
   */
  async prune(signal?: AbortSignal): Promise<PruneCounts> {
    const cutoff = this.clock.now() - retentionMs;
    const recent = formatMicros(cutoff * 1000);
    const counts: PruneCounts = { events: 0, deliveries: 0, attempts: 0, stopped: false };
    // The sweep ends at the newest event past the retention (a step down events_created):
    // the newer ones are never scanned. One logged meanwhile by a replica whose clock lags goes next time.
    const newest = await this.db.kysely
      .selectFrom('events')
      .select('seq')
      .where('created_at', '<', cutoff)
      .orderBy('created_at', 'desc')
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    if (newest === undefined) return counts;
    let after = 0;
    const run = await inSlices(
      this.db.engine,
      (limit) =>
        this.db.transaction(async (trx) => {
          // By the primary key alone; the age is checked here, as is what the queue keeps.
          const rows = await trx
            .selectFrom('events')
            .select(['seq', 'created_at'])
            .where('seq', '>', after)
            .where('seq', '<=', Number(newest.seq))
            .orderBy('seq')
            .limit(limit)
            .execute();
          if (rows.length === 0) return { rows: 0, more: false };
          after = Number(rows[rows.length - 1]!.seq);
          const old = rows.filter((r) => Number(r.created_at) < cutoff).map((r) => Number(r.seq));
          const dropped = await this.deliveries.dropOfEvents(trx, old, recent);
          const doomed = old.filter((seq) => !dropped.kept.has(seq));
          for (const part of chunks(doomed)) await trx.deleteFrom('events').where('seq', 'in', part).execute();
          counts.events += doomed.length;
          counts.deliveries += dropped.deliveries;
          counts.attempts += dropped.attempts;
          return { rows: rows.length, more: rows.length === limit };
        }),
      signal,
    );
    counts.stopped = run.stopped;
    return counts;
  }
}

/** Writes to `events` that other modules make inside their own transactions (one writer per table). */
export const eventWrites = {
  /** PostgreSQL: the events of `input` (a `WITH` item: id, type, device_id, occurred_at, payload, ord) not logged yet, where `guard` holds; their seq and id (poll-record.ts). */
  insertSql: (keyHash: string, input: string, guard: RawBuilder<unknown>, now: number): RawBuilder<unknown> =>
    sql`INSERT INTO events (id, key_hash, type, device_id, occurred_at, payload, created_at)
      SELECT e.id, ${keyHash}, e.type, e.device_id, e.occurred_at, e.payload, ${now}::bigint FROM ${sql.table(input)} e WHERE ${guard} ORDER BY e.ord
      ON CONFLICT (key_hash, id) DO NOTHING RETURNING seq, id`,
  /**
   * Logs one event that is not a device-status change (a `webhook.test`; docs/webhooks.md),
   * with the payload as given; returns its position in the log. Such events never show in the
   * polling trigger or, without `type`, in `GET /v1/events`.
   */
  async insertOne(
    trx: Kysely<Tables>,
    keyHash: string,
    event: { id: string; type: string; occurred_at: string; payload: string },
    now: number,
  ): Promise<number> {
    const row = await trx
      .insertInto('events')
      .values({ id: event.id, key_hash: keyHash, type: event.type, device_id: '', occurred_at: event.occurred_at, payload: event.payload, created_at: now })
      .returning('seq')
      .executeTakeFirstOrThrow();
    return Number(row.seq);
  },
  /**
   * Logs operational events (an id already logged for the key is ignored: ids are
   * deterministic) and queues them to the key's other hooks that list their type. `about` is
   * the hook an event tells of, kept in `device_id`. `queueDeliveries` is the webhooks' fan-out
   * (webhooks/fan-out.ts), passed by its caller in webhooks/. Returns how many were new.
   */
  async insertOperational(
    trx: Kysely<Tables>,
    keyHash: string,
    events: Array<{ id: string; type: string; occurred_at: string; about: string; payload: string }>,
    now: number,
    queueDeliveries: QueueDeliveries,
  ): Promise<number> {
    const rows = await trx
      .insertInto('events')
      .values(
        events.map((e) => ({ id: e.id, key_hash: keyHash, type: e.type, device_id: e.about, occurred_at: e.occurred_at, payload: e.payload, created_at: now })),
      )
      .onConflict((oc) => oc.columns(['key_hash', 'id']).doNothing())
      .returning(['seq', 'id'])
      .execute();
    const seqOf = new Map(rows.map((r) => [r.id, Number(r.seq)]));
    const fresh = events.filter((e) => seqOf.has(e.id));
    if (fresh.length > 0) await queueDeliveries(trx, keyHash, fresh, seqOf, now);
    return fresh.length;
  },
};

/** Logs the events not logged yet; the new ones are handed to the webhooks' fan-out. */
async function insertEvents(
  trx: Kysely<Tables>,
  keyHash: string,
  events: DeviceEvent[],
  now: number,
  queueDeliveries: QueueDeliveries,
): Promise<DeviceEvent[]> {
  // In slices: a mass outage (thousands of changes in one poll) stays under both engines'
  // limits on bound parameters, and is still recorded all or nothing.
  const inserted: Array<{ seq: number; id: string }> = [];
  for (const [i, part] of chunks(events).entries()) {
    // A mass outage is many slices: other requests run in between (SQLite answers synchronously).
    if (i > 0) await setImmediate();
    const rows = await trx
      .insertInto('events')
      .values(
        part.map((e) => ({
          id: e.id,
          key_hash: keyHash,
          type: e.type,
          device_id: e.device.id,
          occurred_at: e.occurred_at,
          payload: JSON.stringify(e),
          created_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(['key_hash', 'id']).doNothing())
      .returning(['seq', 'id'])
      .execute();
    inserted.push(...rows);
  }
  const seqOf = new Map(inserted.map((r) => [r.id, Number(r.seq)]));
  const fresh = events.filter((e) => seqOf.has(e.id));
  if (fresh.length > 0) await queueDeliveries(trx, keyHash, fresh, seqOf, now);
  return fresh;
}

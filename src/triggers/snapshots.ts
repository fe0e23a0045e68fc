import { setImmediate } from 'node:timers/promises';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import { chunks, inChunks } from '../db/chunks.js';
import type { Snapshot } from './transitions.js';
import { watchWrites } from './watches.js';

/** Snapshot ids read per query when looking for the devices a poll no longer saw. */
const idChunk = 5000;

/** A snapshot row to write: a device new to the key's snapshot, or whose status changed. */
export type SnapshotRow = [deviceId: string, snapshot: Snapshot];

/**
 * What the poller remembers of each key's devices between polls (`device_snapshots`): the
 * status of each device, the heartbeat of its last status change and its last event; devices
 * left out of the listings stay, marked missing, until the retention prunes them. This module is the
 * table's one writer (docs/architecture.md). Reads go by the ids of one page of devices at a
 * time, so a poll never holds a key's whole snapshot (a key may have 100,000 devices).
 */
export class SnapshotStore {
  constructor(private readonly db: Db) {}

  /** The snapshot rows of these devices (lower-case ids), missing ones too; devices without one are absent. */
  async of(keyHash: string, deviceIds: readonly string[]): Promise<Map<string, Snapshot>> {
    const rows = await inChunks(deviceIds, (part) =>
      this.db.kysely.selectFrom('device_snapshots').select(snapshotColumns).where('key_hash', '=', keyHash).where('device_id', 'in', part).execute(),
    );
    return new Map(rows.map((r) => [r.device_id, snapshotOf(r)]));
  }

  /**
   * The whole snapshot of a key, when it holds at most `limit` rows (missing ones too); else
   * null. A poll of a small key reads its snapshot with this one statement instead of a look-up
   * by ids and a count (docs/triggers.md).
   */
  async whole(keyHash: string, limit: number): Promise<Map<string, Snapshot> | null> {
    const rows = await this.db.kysely
      .selectFrom('device_snapshots')
      .select(snapshotColumns)
      .where('key_hash', '=', keyHash)
      .limit(limit + 1)
      .execute();
    return rows.length > limit ? null : new Map(rows.map((r) => [r.device_id, snapshotOf(r)]));
  }

  /** How many devices the key's snapshot holds that were listed at its last poll (not missing). */
  async size(keyHash: string): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('device_snapshots')
      .where('key_hash', '=', keyHash)
      .where('missing_since', 'is', null)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Deletes the rows of devices missing since before `cutoffMs` (the events' retention: what was
   * known of a device gone that long is no longer compared with), in slices of `slice` rows, each
   * a statement of its own with other work let through in between. Returns the rows deleted.
   */
  async pruneMissing(cutoffMs: number, slice = 1000): Promise<number> {
    let deleted = 0;
    for (;;) {
      const result = await this.db.kysely
        .deleteFrom('device_snapshots')
        .where((eb) =>
          eb(
            eb.refTuple('key_hash', 'device_id'),
            'in',
            eb
              .selectFrom('device_snapshots as m')
              .select(['m.key_hash', 'm.device_id'])
              .where('m.missing_since', '<', cutoffMs)
              .limit(slice)
              .$asTuple('key_hash', 'device_id'),
          ),
        )
        .executeTakeFirst();
      const n = Number(result.numDeletedRows);
      deleted += n;
      if (n < slice) return deleted;
      await setImmediate();
    }
  }

  /** The snapshot's device ids (of devices not missing) that are not in `seen`: keyset chunks along the primary key, yielding in between. */
  async idsExcept(keyHash: string, seen: ReadonlySet<string>): Promise<string[]> {
    const gone: string[] = [];
    for (let after: string | null = null; ;) {
      const rows: Array<{ device_id: string }> = await this.db.kysely
        .selectFrom('device_snapshots')
        .select('device_id')
        .where('key_hash', '=', keyHash)
        .where('missing_since', 'is', null)
        .$if(after !== null, (q) => q.where('device_id', '>', after!))
        .orderBy('device_id')
        .limit(idChunk)
        .execute();
      for (const r of rows) if (!seen.has(r.device_id)) gone.push(r.device_id);
      if (rows.length < idChunk) return gone;
      after = rows[rows.length - 1]!.device_id;
      await setImmediate();
    }
  }

  /**
   * Writes rows in a transaction of their own (a baseline's slices: see docs/triggers.md), while
   * `owner` still holds the key's poll lease; else LeaseLostError, writing nothing.
   */
  writeSlice(keyHash: string, rows: readonly SnapshotRow[], owner: string): Promise<void> {
    return this.db.transaction(async (trx) => {
      await watchWrites.holdLease(trx, keyHash, owner);
      await snapshotWrites.write(trx, keyHash, rows, [], 0);
    });
  }
}

/** The snapshot writes made inside another module's transaction (the event log's record of a poll). */
export const snapshotWrites = {
  /**
   * Changed rows as multi-row upserts (a row written is listed again: not missing), devices the
   * poll did not see marked missing since `now` (one update per chunk; a row already missing
   * keeps its time); the event loop is let through between statements.
   */
  async write(trx: Kysely<Tables>, keyHash: string, changed: readonly SnapshotRow[], vanished: readonly string[], now: number): Promise<void> {
    let statements = 0;
    for (const part of chunks(changed)) {
      if (statements++ > 0) await setImmediate();
      await trx
        .insertInto('device_snapshots')
        .values(
          part.map(([device_id, s]) => ({
            key_hash: keyHash,
            device_id,
            status: s.status,
            last_heartbeat_at: s.last_heartbeat_at,
            missing_since: null,
            last_event_id: s.last_event_id ?? null,
            last_event_at: s.last_event_at ?? null,
          })),
        )
        .onConflict((oc) =>
          oc.columns(['key_hash', 'device_id']).doUpdateSet((eb) => ({
            status: eb.ref('excluded.status'),
            last_heartbeat_at: eb.ref('excluded.last_heartbeat_at'),
            missing_since: null,
            last_event_id: eb.ref('excluded.last_event_id'),
            last_event_at: eb.ref('excluded.last_event_at'),
          })),
        )
        .execute();
    }
    for (const part of chunks(vanished)) {
      if (statements++ > 0) await setImmediate();
      await trx
        .updateTable('device_snapshots')
        .set({ missing_since: now })
        .where('key_hash', '=', keyHash)
        .where('device_id', 'in', part)
        .where('missing_since', 'is', null)
        .execute();
    }
  },

  /**
   * PostgreSQL: `write` as two items of the `WITH` of a record's one statement (event-log.ts),
   * each made only where `guard` holds (the lease did): the changed rows as one upsert of
   * arrays, the vanished devices marked missing (no item when none vanished: planned for any
   * list, as the prepared record is (db/prepared.ts), that update of an empty list was priced as
   * a look-up of ten devices, over twice the rest of the statement, and PostgreSQL kept planning
   * the statement for each run's own parameters instead).
   */
  writeSql(keyHash: string, changed: readonly SnapshotRow[], vanished: readonly string[], now: number, guard: RawBuilder<unknown>): RawBuilder<unknown> {
    const ids = changed.map(([id]) => id);
    const col = <K extends keyof Snapshot>(k: K) => changed.map(([, s]) => s[k] ?? null);
    const missing = sql`,
      snapshot_missing AS (
        UPDATE device_snapshots SET missing_since = ${now}
        WHERE key_hash = ${keyHash} AND device_id = ANY(${[...vanished]}::text[]) AND missing_since IS NULL
          AND ${guard}
      )`;
    return sql`snapshot_upsert AS (
        INSERT INTO device_snapshots (key_hash, device_id, status, last_heartbeat_at, missing_since, last_event_id, last_event_at)
        SELECT ${keyHash}, c.device_id, c.status, c.last_heartbeat_at, NULL, c.last_event_id, c.last_event_at
        FROM unnest(${ids}::text[], ${col('status')}::text[], ${col('last_heartbeat_at')}::text[], ${col('last_event_id')}::text[], ${col('last_event_at')}::text[])
          AS c(device_id, status, last_heartbeat_at, last_event_id, last_event_at)
        WHERE ${guard}
        ON CONFLICT (key_hash, device_id) DO UPDATE SET status = excluded.status, last_heartbeat_at = excluded.last_heartbeat_at,
          missing_since = NULL, last_event_id = excluded.last_event_id, last_event_at = excluded.last_event_at
      )${vanished.length > 0 ? missing : sql``}`;
  },
};

const snapshotColumns = ['device_id', 'status', 'last_heartbeat_at', 'missing_since', 'last_event_id', 'last_event_at'] as const;

function snapshotOf(r: Pick<Tables['device_snapshots'], (typeof snapshotColumns)[number]>): Snapshot {
  const snap: Snapshot = { status: r.status, last_heartbeat_at: r.last_heartbeat_at, last_event_id: r.last_event_id, last_event_at: r.last_event_at };
  if (r.missing_since !== null) snap.missing = true;
  return snap;
}

import { setImmediate } from 'node:timers/promises';
import type { Kysely } from 'kysely';
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
 * status of each device and the heartbeat of its last status change. This module is the
 * table's one writer (docs/architecture.md). Reads go by the ids of one page of devices at a
 * time, so a poll never holds a key's whole snapshot (a key may have 100,000 devices).
 */
export class SnapshotStore {
  constructor(private readonly db: Db) {}

  /** The snapshot rows of these devices (lower-case ids); devices without one are absent. */
  async of(keyHash: string, deviceIds: readonly string[]): Promise<Map<string, Snapshot>> {
    const rows = await inChunks(deviceIds, (part) =>
      this.db.kysely
        .selectFrom('device_snapshots')
        .select(['device_id', 'status', 'last_heartbeat_at'])
        .where('key_hash', '=', keyHash)
        .where('device_id', 'in', part)
        .execute(),
    );
    return new Map(rows.map((r) => [r.device_id, { status: r.status, last_heartbeat_at: r.last_heartbeat_at }]));
  }

  /** How many devices the key's snapshot holds. */
  async size(keyHash: string): Promise<number> {
    const row = await this.db.kysely
      .selectFrom('device_snapshots')
      .where('key_hash', '=', keyHash)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** The snapshot's device ids that are not in `seen`: keyset chunks along the primary key, yielding in between. */
  async idsExcept(keyHash: string, seen: ReadonlySet<string>): Promise<string[]> {
    const gone: string[] = [];
    for (let after: string | null = null; ; ) {
      const rows: Array<{ device_id: string }> = await this.db.kysely
        .selectFrom('device_snapshots')
        .select('device_id')
        .where('key_hash', '=', keyHash)
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
      await snapshotWrites.write(trx, keyHash, rows, []);
    });
  }
}

/** The snapshot writes made inside another module's transaction (the event log's record of a poll). */
export const snapshotWrites = {
  /** Changed rows as multi-row upserts, vanished devices as one delete per chunk; the event loop is let through between statements. */
  async write(trx: Kysely<Tables>, keyHash: string, changed: readonly SnapshotRow[], vanished: readonly string[]): Promise<void> {
    for (const part of chunks(changed)) {
      await setImmediate();
      await trx
        .insertInto('device_snapshots')
        .values(part.map(([device_id, s]) => ({ key_hash: keyHash, device_id, status: s.status, last_heartbeat_at: s.last_heartbeat_at })))
        .onConflict((oc) =>
          oc.columns(['key_hash', 'device_id']).doUpdateSet((eb) => ({
            status: eb.ref('excluded.status'),
            last_heartbeat_at: eb.ref('excluded.last_heartbeat_at'),
          })),
        )
        .execute();
    }
    for (const part of chunks(vanished)) {
      await setImmediate();
      await trx.deleteFrom('device_snapshots').where('key_hash', '=', keyHash).where('device_id', 'in', part).execute();
    }
  },
};

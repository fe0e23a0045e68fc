import { setImmediate } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { chunks } from '../db/chunks.js';
import type { DeviceEvent } from './transitions.js';
import type { QueueDeliveries } from './event-deliveries.js';

/** Logs the events not logged yet; the new ones are handed to the webhooks' fan-out. */
export async function insertEvents(
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

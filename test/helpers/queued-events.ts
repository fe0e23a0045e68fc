import type { DeviceEvent } from '../../src/catalog/event.js';
import type { Db } from '../../src/db/database.js';
import { queueDeliveries } from '../../src/webhooks/fan-out.js';

/**
 * `ids.length` `device.offline` events of `device` for the key `keyHash`, logged at `now` and
 * fanned out to the key's hooks in one transaction, as a poll does: the queue suites' way of
 * filling the delivery queue without an upstream.
 */
export async function queueOfflineEvents(db: Db, keyHash: string, device: string, ids: string[], now: number): Promise<void> {
  const events = ids.map((id) => ({
    id,
    type: 'device.offline',
    occurred_at: '2026-06-01T12:00:00.000000Z',
    device: { id: device },
    previous_status: 'online',
    status: 'offline',
  })) as unknown as DeviceEvent[];
  await db.transaction(async (trx) => {
    const rows = await trx
      .insertInto('events')
      .values(
        events.map((e) => ({
          id: e.id,
          key_hash: keyHash,
          type: e.type,
          device_id: device,
          occurred_at: e.occurred_at,
          payload: JSON.stringify(e),
          created_at: now,
        })),
      )
      .returning(['seq', 'id'])
      .execute();
    await queueDeliveries(trx, keyHash, events, new Map(rows.map((r) => [r.id, Number(r.seq)])), now);
  });
}

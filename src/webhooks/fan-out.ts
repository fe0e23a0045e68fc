import { setImmediate } from 'node:timers/promises';
import type { Insertable, Kysely } from 'kysely';
import type { DeviceEvent } from '../catalog/event.js';
import { chunks } from '../db/chunks.js';
import type { Tables } from '../db/tables.js';
import { hookWrites } from './hook-store.js';

/**
 * How far apart, in virtual time, one hook's queued deliveries are placed (docs/webhooks.md,
 * "Fairness"). Within a target origin, due deliveries are claimed in `fair_at` order: a hook
 * with nothing queued places its next delivery at now, a hook with a backlog places it after
 * its last one. So a hook that queues 10,000 deliveries at once spreads them over 10,000 s of
 * virtual time, and another hook's delivery queued meanwhile comes after at most a few of them,
 * however long the backlog. It orders only: when a delivery is due stays `next_attempt_at`.
 */
export const fairSpacingMs = 1_000;

/** Stable per hook and event, so every retry of one event to one hook carries the same id. */
export function webhookId(hookId: string, eventId: string): string {
  return `msg_${hookId.replace(/^hook_/, '')}_${eventId.replace(/^evt_/, '')}`;
}

/**
 * Queues a delivery of each new event to every matching active hook of the key (the fan-out),
 * inside the transaction that logged the events. `seqOf` maps event ids to their log position.
 */
export async function queueDeliveries(trx: Kysely<Tables>, keyHash: string, events: DeviceEvent[], seqOf: Map<string, number>, now: number): Promise<void> {
  const hooks = await trx
    .selectFrom('hooks')
    .select(['id', 'events', 'device_ids', 'fair_cursor'])
    .where('key_hash', '=', keyHash)
    .where('status', '=', 'active')
    .execute();
  const matching = hooks
    .map((hook) => {
      const types = JSON.parse(hook.events) as string[];
      const devices = hook.device_ids ? new Set(JSON.parse(hook.device_ids) as string[]) : null;
      return { hook, events: events.filter((event) => types.includes(event.type) && (!devices || devices.has(event.device.id))) };
    })
    .filter((m) => m.events.length > 0);
  if (matching.length === 0) return;
  const backlogged = new Set(
    (
      await trx
        .selectFrom('deliveries')
        .select('hook_id')
        .distinct()
        .where('hook_id', 'in', matching.map((m) => m.hook.id))
        .where('status', '=', 'pending')
        .execute()
    ).map((row) => row.hook_id),
  );
  const deliveries: Array<Insertable<Tables['deliveries']>> = [];
  for (const { hook, events: due } of matching) {
    // A hook with nothing queued starts at now; one with a backlog continues after it.
    const start = backlogged.has(hook.id) ? Math.max(now, Number(hook.fair_cursor) + fairSpacingMs) : now;
    due.forEach((event, i) =>
      deliveries.push({
        hook_id: hook.id,
        event_seq: seqOf.get(event.id)!,
        webhook_id: webhookId(hook.id, event.id),
        status: 'pending' as const,
        next_attempt_at: now,
        created_at: now,
        fair_at: start + i * fairSpacingMs,
      }),
    );
    await hookWrites.setFairCursor(trx, hook.id, start + (due.length - 1) * fairSpacingMs);
  }
  for (const part of chunks(deliveries)) {
    // Thousands of deliveries are many slices: other requests run in between (SQLite answers synchronously).
    await setImmediate();
    await trx.insertInto('deliveries').values(part).onConflict((oc) => oc.columns(['hook_id', 'event_seq']).doNothing()).execute();
  }
}

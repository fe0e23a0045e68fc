import type { Clock } from '../time/timestamps.js';
import { retentionMs, type EventLog } from '../triggers/event-log.js';
import type { DeliveryQueue } from './delivery-queue.js';
import type { HookStore } from './hook-store.js';

export const expiredReason = 'The event passed the 7-day retention before it could be delivered';

/**
 * The 7-day retention (docs/webhooks.md, "Retention"), run by the poller once per interval,
 * each table by its own writer, in this order:
 * 1. deliveries still pending whose event is older than the retention become `dead`, with an
 *    attempt record that gives the reason (nothing is dropped silently);
 * 2. events older than the retention go, unless a delivery of theirs is pending or was
 *    attempted within it (their finished deliveries and attempts go with them);
 * 3. hooks disabled longer ago than the retention go.
 */
export function retention(parts: { clock: Clock; queue: DeliveryQueue; log: EventLog; hooks: HookStore }): () => Promise<void> {
  return async () => {
    const cutoff = parts.clock.now() - retentionMs;
    await parts.queue.expire(cutoff, expiredReason);
    await parts.log.prune();
    await parts.hooks.pruneDisabled(cutoff);
  };
}

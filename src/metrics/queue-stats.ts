import type { WatchStore } from '../triggers/watches.js';
import type { DeliveryQueue } from '../webhooks/delivery-queue.js';
import type { QueueStats } from './metrics.js';

/**
 * The database-backed gauges, read at scrape time from the stores (either engine): the
 * delivery queue by state with its oldest due delivery, and the watched key most overdue for
 * its poll (each key has its own next poll time; a key leased to a replica is not overdue).
 */
export function queueStats(deliveries: DeliveryQueue, watches: WatchStore): () => Promise<QueueStats> {
  return async () => {
    const [queue, oldestOverdueKeyMs] = await Promise.all([deliveries.stats(), watches.oldestOverdueMs()]);
    return {
      deliveries: { pending: queue.pending, retrying: queue.retrying, dead: queue.dead },
      oldestDueDeliveryMs: queue.oldestDueMs,
      oldestOverdueKeyMs,
    };
  };
}

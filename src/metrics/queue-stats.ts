import type { QueueStats } from './metrics.js';

/**
 * What the gauges read of the delivery queue (webhooks/delivery-queue.ts) and the watch store
 * (triggers/watches.ts), declared here so metrics/ need not import the folders above it.
 */
export interface DeliveryCounts {
  stats(): Promise<{ pending: number; retrying: number; dead: number; oldestDueMs: number }>;
}
export interface WatchLag {
  oldestOverdueMs(): Promise<number>;
}

/**
 * The database-backed gauges, read at scrape time from the stores (either engine): the
 * delivery queue by state with its oldest due delivery, and the watched key most overdue for
 * its poll (each key has its own next poll time; a key leased to a replica is not overdue).
 */
export function queueStats(deliveries: DeliveryCounts, watches: WatchLag): () => Promise<QueueStats> {
  return async () => {
    const [queue, oldestOverdueKeyMs] = await Promise.all([deliveries.stats(), watches.oldestOverdueMs()]);
    return {
      deliveries: { pending: queue.pending, retrying: queue.retrying, dead: queue.dead },
      oldestDueDeliveryMs: queue.oldestDueMs,
      oldestOverdueKeyMs,
    };
  };
}

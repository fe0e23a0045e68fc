import type { Kysely, RawBuilder } from 'kysely';
import type { Tables } from '../db/tables.js';

/** An event as the webhooks' fan-out takes it: a device event, or an operational one `about` a hook. */
export type LoggedEvent = { id: string; type: string; device?: { id: string }; about?: string };

/** Queues deliveries of newly logged events to the key's matching hooks, in the logging transaction. */
export type QueueDeliveries = (trx: Kysely<Tables>, keyHash: string, events: LoggedEvent[], seqOf: Map<string, number>, now: number) => Promise<void>;

/**
 * What the event log asks of the webhooks' deliveries: queue them for new events
 * (webhooks/fan-out.ts queueDeliveries) and, before a retention sweep drops old events, drop
 * their finished deliveries and name the events still pending (webhooks/attempt-log.ts
 * dropDeliveriesOfEvents). Declared here and passed in by services.ts: webhooks/ sits above triggers/.
 */
export interface EventDeliveries {
  queue: QueueDeliveries;
  /**
   * PostgreSQL: `queue` for device events as items of the `WITH` of the record's one statement
   * (webhooks/fan-out.ts queueDeliveriesSql); `logged` names the item listing the events just
   * logged (`seq`, `id`, `type`, `device_id`, `ord`). Without it a record is a transaction of
   * several statements.
   */
  queueSql?: (keyHash: string, logged: string, now: number) => RawBuilder<unknown>;
  dropOfEvents(trx: Kysely<Tables>, eventSeqs: readonly number[], recent: string): Promise<{ kept: Set<number>; deliveries: number; attempts: number }>;
}

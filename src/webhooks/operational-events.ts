import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import { eventWrites } from '../triggers/event-log.js';
import { deliveryIdText } from './delivery-log.js';
import { queueDeliveries } from './fan-out.js';
import type { AttemptRecord } from './delivery-types.js';

/** Why a hook was disabled by its receiver (the hook's `status_reason` says the same). */
const goneReason = 'The receiver answered 410 Gone';

/** Deterministic: the same notice about the same hook, delivery and attempt is one event, whichever replica logs it. */
const noticeId = (parts: Array<string | number>): string => `evt_${createHash('sha256').update(parts.join('|')).digest('hex').slice(0, 32)}`;

/**
 * The operational events (docs/webhooks.md, "Operational events"): `hook.disabled` when a
 * receiver answers 410, `delivery.dead` when a delivery's retries are exhausted. Logged in the
 * key's event log and delivered to the key's other hooks that list them. Called with every batch
 * of recorded attempts; a batch with neither outcome (nearly all of them) costs nothing. A
 * delivery of an operational event that dies tells no one (no notices about notices).
 */
export class OperationalEvents {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** New deliveries were queued: the deliverer should look. */
    private readonly wake: () => void,
  ) {}

  /** Best effort after the records landed: a failure is logged, the deliveries' own state is already recorded. */
  notice(records: readonly AttemptRecord[]): void {
    const notable = records.filter((r) => (r.outcome === 'dead' || r.outcome === 'disabled') && r.delivery.type.startsWith('device.'));
    if (notable.length === 0) return;
    void this.log(notable).catch((err: unknown) => this.logger.warn({ err: (err as Error).message }, 'could not log operational events'));
  }

  private async log(records: AttemptRecord[]): Promise<void> {
    const hooks = await this.db.kysely
      .selectFrom('hooks')
      .select(['id', 'key_hash', 'target_url'])
      .where('id', 'in', [...new Set(records.map((r) => r.delivery.hook_id))])
      .execute();
    const byId = new Map(hooks.map((h) => [h.id, h]));
    const perKey = new Map<string, Array<{ id: string; type: string; occurred_at: string; about: string; payload: string }>>();
    for (const r of records) {
      const hook = byId.get(r.delivery.hook_id);
      if (!hook) continue;
      const type = r.outcome === 'disabled' ? 'hook.disabled' : 'delivery.dead';
      const id = noticeId([type, hook.id, r.delivery.id, r.attempt]);
      const occurredAt = formatMicros(r.attemptedAt * 1000);
      const reason =
        r.outcome === 'disabled' ? goneReason : `Every attempt failed; the last: ${r.statusCode === null ? (r.error ?? 'no answer') : `HTTP ${r.statusCode}`}`;
      const data = {
        hook_id: hook.id,
        target_url: hook.target_url,
        reason,
        ...(type === 'delivery.dead' ? { delivery_id: deliveryIdText(r.delivery.id), event_id: r.delivery.event_id } : {}),
      };
      const list = perKey.get(hook.key_hash) ?? [];
      list.push({ id, type, occurred_at: occurredAt, about: hook.id, payload: JSON.stringify({ id, type, occurred_at: occurredAt, data }) });
      perKey.set(hook.key_hash, list);
    }
    let fresh = 0;
    for (const [keyHash, events] of perKey)
      fresh += await this.db.transaction((trx) => eventWrites.insertOperational(trx, keyHash, events, this.clock.now(), queueDeliveries));
    if (fresh > 0) this.wake();
  }
}

import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import { eventWrites } from '../triggers/event-log.js';
import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { deliveryIdText } from './delivery-log.js';
import { queueDeliveries } from './fan-out.js';
import { hookWrites } from './hook-store.js';
import type { AttemptRecord } from './delivery-types.js';

/** Why a hook was disabled by its receiver (the hook's `status_reason` says the same). */
const goneReason = 'The receiver answered 410 Gone';

/** Deterministic: the same notice about the same hook, delivery and attempt is one event, whichever replica logs it. */
const noticeId = (parts: Array<string | number>): string => `evt_${createHash('sha256').update(parts.join('|')).digest('hex').slice(0, 32)}`;

type Notice = { id: string; type: string; occurred_at: string; about: string; payload: string };

function notice(type: string, id: string, at: number, data: Record<string, string>): Notice {
  const occurredAt = formatMicros(at * 1000);
  return { id, type, occurred_at: occurredAt, about: data.hook_id!, payload: JSON.stringify({ id, type, occurred_at: occurredAt, data }) };
}

/**
 * The operational events (docs/webhooks.md, "Operational events"): `hook.disabled` when a
 * receiver answers 410 or the upstream's rejection of the key pauses its hooks,
 * `delivery.dead` when a delivery's retries are exhausted. Logged in the key's event log (and
 * in the service's log) and delivered to the key's other hooks that list them. `notice` is
 * called with every batch of recorded attempts; a batch with neither outcome (nearly all of
 * them) costs nothing. A delivery of an operational event that dies tells no one (no notices
 * about notices).
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

  /**
   * The key's watch is paused (triggers/watches.ts), in its transaction: its active hooks are
   * paused, and a `hook.disabled` notice about each is logged and queued to the key's other
   * hooks that list it. The id is the hook's and the pause's: a pause of hooks already paused
   * (another replica's, or a transaction written again) finds none and logs nothing.
   */
  async pauseKey(trx: Kysely<Tables>, keyHash: string, reason: string): Promise<number> {
    const paused = await hookWrites.pauseKey(trx, keyHash, reason);
    if (paused.length === 0) return 0;
    const at = this.clock.now();
    const notices = paused.map((hook) =>
      notice('hook.disabled', noticeId(['hook.disabled', hook.id, 'paused', at]), at, { hook_id: hook.id, target_url: hook.target_url, reason }),
    );
    const fresh = await eventWrites.insertOperational(trx, keyHash, notices, at, queueDeliveries);
    for (const n of notices) this.logger.info({ type: n.type, event: n.id, hook: n.about, reason }, 'operational event');
    return fresh;
  }

  private async log(records: AttemptRecord[]): Promise<void> {
    const hooks = await this.db.kysely
      .selectFrom('hooks')
      .select(['id', 'key_hash', 'target_url'])
      .where('id', 'in', [...new Set(records.map((r) => r.delivery.hook_id))])
      .execute();
    const byId = new Map(hooks.map((h) => [h.id, h]));
    const perKey = new Map<string, Notice[]>();
    for (const r of records) {
      const hook = byId.get(r.delivery.hook_id);
      if (!hook) continue;
      const type = r.outcome === 'disabled' ? 'hook.disabled' : 'delivery.dead';
      const reason =
        r.outcome === 'disabled' ? goneReason : `Every attempt failed; the last: ${r.statusCode === null ? (r.error ?? 'no answer') : `HTTP ${r.statusCode}`}`;
      const data = {
        hook_id: hook.id,
        target_url: hook.target_url,
        reason,
        ...(type === 'delivery.dead' ? { delivery_id: deliveryIdText(r.delivery.id), event_id: r.delivery.event_id } : {}),
      };
      perKey.set(hook.key_hash, [...(perKey.get(hook.key_hash) ?? []), notice(type, noticeId([type, hook.id, r.delivery.id, r.attempt]), r.attemptedAt, data)]);
    }
    let fresh = 0;
    for (const [keyHash, events] of perKey) {
      fresh += await this.db.transaction((trx) => eventWrites.insertOperational(trx, keyHash, events, this.clock.now(), queueDeliveries));
      for (const n of events) this.logger.info({ type: n.type, event: n.id, hook: n.about }, 'operational event');
    }
    if (fresh > 0) this.wake();
  }
}

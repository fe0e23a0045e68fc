import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { AppError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import { formatMicros, parseIso, type Clock } from '../time/timestamps.js';
import { eventWrites } from '../triggers/event-log.js';
import { DeliveryLog, parseDeliveryId, testEventType, type DeliveryItem } from './delivery-log.js';
import { webhookId } from './fan-out.js';
import { attemptsKeptAtReset } from './attempt-log.js';
import { targetOrigin } from '../db/hook-identity.js';
import type { Hook, HookStore } from './hook-store.js';
import { recordTest, recover, resendDelivery, type RecoverRange, type RecoverTarget } from './redelivery.js';
import type { WebhookSender } from './sender.js';
import { rotatedHeaders } from './signing.js';
import type { RequestWaits } from '../db/wait-budget.js';
import { requestView } from '../db/request-view.js';

export interface HookOperationsOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  hooks: HookStore;
  send: WebhookSender;
  /** New work for the deliverer: look now rather than at its next idle check. */
  wake: () => void;
  metrics?: Metrics;
  /** WEBHOOK_RETRY_SCHEDULE_MS's length: a re-queued delivery's log keeps room for a round (attempt-log.ts). */
  retryScheduleLength: number;
}

export interface TestOutcome {
  delivered: boolean;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

/**
 * What a key's owner does when something goes wrong with a hook (docs/webhooks.md, "When
 * something goes wrong"): send a test, resend one delivery, recover a time range. A recover is
 * counted first (its answer), then runs in the background a slice at a time; `settled` waits
 * for the recovers under way (tests, shutdown).
 */
export class HookOperations {
  readonly deliveries: DeliveryLog;
  private readonly running = new Set<Promise<void>>();
  private stopping = false;

  constructor(private readonly options: HookOperationsOptions) {
    this.deliveries = new DeliveryLog(options.db);
  }

  /** These operations as one request uses them: its database waits share the request's deadline (db/wait-budget.ts). */
  within(waits: RequestWaits | undefined): this {
    if (!waits) return this;
    const options = { ...this.options, db: this.options.db.within(waits), hooks: this.options.hooks.within(waits) };
    return requestView(this, this.options.db, waits, { options, deliveries: this.deliveries.within(waits) });
  }

  /**
   * Signs and sends one `webhook.test` delivery now (with both signatures during a rotation's
   * overlap), records it with its one attempt, and answers what came of it. Never retried.
   */
  async sendTest(keyHash: string, hookId: string): Promise<TestOutcome> {
    const { db, clock, box, send, logger } = this.options;
    const hook = await db.kysely
      .selectFrom('hooks')
      .select(['id', 'target_url', 'secret_cipher', 'secret_previous_cipher', 'secret_previous_until'])
      .where('key_hash', '=', keyHash)
      .where('id', '=', hookId)
      .executeTakeFirst();
    if (!hook) throw new AppError('not_found', 'Hook not found');
    const now = clock.now();
    const eventId = `evt_test_${randomBytes(12).toString('hex')}`;
    const occurredAt = formatMicros(now * 1000);
    const payload = JSON.stringify({ id: eventId, type: testEventType, occurred_at: occurredAt, data: { hook_id: hook.id, target_url: hook.target_url } });
    const body = `{"type":"${testEventType}","timestamp":"${occurredAt}","data":${payload}}`;
    const previous = hook.secret_previous_cipher && now < Number(hook.secret_previous_until) ? box.open(hook.secret_previous_cipher) : null;
    const id = webhookId(hook.id, eventId);
    const result = await send(hook.target_url, body, { ...rotatedHeaders(box.open(hook.secret_cipher), previous, id, Math.floor(now / 1000), body) });
    const delivered = result.status !== null && result.status >= 200 && result.status < 300;
    this.options.metrics?.hookOperation(delivered ? 'test_delivered' : 'test_failed');
    try {
      await db.transaction(async (trx) => {
        const seq = await eventWrites.insertOne(trx, keyHash, { id: eventId, type: testEventType, occurred_at: occurredAt, payload }, clock.now());
        await recordTest(trx, {
          hookId: hook.id,
          origin: targetOrigin(hook.target_url),
          eventSeq: seq,
          webhookId: id,
          eventId,
          delivered,
          statusCode: result.status,
          error: result.error,
          durationMs: result.durationMs,
          attemptedAt: now,
          requestHeaders: result.requestHeaders ?? null,
          responseBody: result.responseBody ?? null,
        });
      });
    } catch (err) {
      // The hook was deleted while its test was on its way: the outcome is still the answer.
      logger.warn({ err: (err as Error).message, hook: hook.id }, 'could not record a test delivery');
    }
    return { delivered, status_code: result.status, duration_ms: Math.round(result.durationMs), error: result.error };
  }

  /** One more attempt now, same `webhook-id` (redelivery.ts); 409 while the hook is disabled. */
  async resend(keyHash: string, hookId: string, deliveryId: string): Promise<DeliveryItem> {
    const hook = await this.options.hooks.get(keyHash, hookId);
    const id = parseDeliveryId(deliveryId);
    if (id === null) throw new AppError('not_found', 'Delivery not found');
    if (hook.status === 'disabled')
      throw new AppError('conflict', 'The hook is disabled: enable it first (PATCH /v1/hooks/{id} with enabled: true), then resend');
    const keep = attemptsKeptAtReset(this.options.retryScheduleLength);
    const done = await resendDelivery(this.options.db, hook.id, targetOrigin(hook.target_url), id, this.options.clock.now(), keep);
    if (done === 'missing') throw new AppError('not_found', 'Delivery not found');
    if (done === 'test') throw new AppError('conflict', 'A test delivery is not resent: send a new test (POST /v1/hooks/{id}/test)');
    this.options.metrics?.hookOperation('resend');
    this.options.wake();
    const { attempts: _attempts, attempts_dropped: _dropped, ...item } = await this.deliveries.detail(hook, deliveryId);
    return item;
  }

  /**
   * Counts what a recover of `range` queues; unless `dryRun`, then starts it in the background
   * and returns the count at once.
   */
  async recover(keyHash: string, hookId: string, range: RecoverRange, dryRun: boolean): Promise<number> {
    const { db, clock, logger, metrics } = this.options;
    const target = recoverTarget(await this.options.hooks.get(keyHash, hookId), keyHash, attemptsKeptAtReset(this.options.retryScheduleLength));
    const count = await recover(db, target, range, clock.now(), true);
    metrics?.hookOperation(dryRun ? 'recover_dry_run' : 'recover');
    if (dryRun || this.stopping) return count;
    const job = recover(db, target, range, clock.now(), false, () => this.stopping).then(
      async (queued) => {
        // Thousands re-queued: fresh planner statistics before the deliverer claims them, as
        // after a poll that logs as many (docs/webhooks.md, "Durability").
        await db.refreshStatistics(['deliveries'], queued).catch(() => undefined);
        metrics?.recoveredDeliveries(queued);
        logger.info({ hook: target.id, queued }, 'recover done');
        if (queued > 0) this.options.wake();
      },
      (err: unknown) => logger.warn({ err: (err as Error).message, hook: target.id }, 'recover stopped part way; asking again is safe'),
    );
    this.running.add(job);
    void job.finally(() => this.running.delete(job));
    return count;
  }

  /** Waits for the recovers under way. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** Recovers under way stop at their next slice (what they queued stays queued; asking again is safe). */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.settled();
  }
}

function recoverTarget(hook: Hook, keyHash: string, attemptsKept: number): RecoverTarget {
  return {
    id: hook.id,
    keyHash,
    origin: targetOrigin(hook.target_url),
    events: hook.events,
    deviceIds: hook.device_ids,
    createdMs: Math.floor((parseIso(hook.created_at) ?? 0) / 1000),
    attemptsKept,
  };
}

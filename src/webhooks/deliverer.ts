import type { Logger } from 'pino';
import type { Statement } from 'better-sqlite3';
import type { Db } from '../db/database.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import type { SendResult, WebhookSender } from './sender.js';
import { signedHeaders } from './signing.js';

export interface DelivererOptions {
  db: Db;
  clock: Clock;
  logger: Logger;
  box: SecretBox;
  send: WebhookSender;
  /** Delays before each retry (WEBHOOK_RETRY_SCHEDULE_MS); after the last, a delivery is dead. */
  retryScheduleMs: number[];
  timeoutMs: number;
  /** How often the queue is checked when nothing wakes the deliverer (ms). */
  idleCheckMs?: number;
  batchSize?: number;
  /** Deliveries in flight at once to one target origin. */
  perTargetConcurrency?: number;
}

interface Due {
  id: number;
  hook_id: string;
  webhook_id: string;
  attempts: number;
  target_url: string;
  secret_cipher: string;
  event_id: string;
  type: string;
  occurred_at: string;
  payload: string;
}

/** A receiver's Retry-After is honoured up to a day. */
const maxRetryAfterMs = 86_400_000;

/**
 * The webhook delivery engine. Its queue is the `deliveries` table, so a restart or crash
 * loses nothing: a delivery is leased while in flight, and a lease that outlives its process
 * simply expires and the delivery is sent again (at-least-once, same `webhook-id`).
 * Outcomes: 2xx delivered (never sent again); 410 disables the hook and cancels its queue;
 * anything else (timeout, network error, refused target, other status) retries after the next
 * delay of the schedule, or the receiver's Retry-After if longer; after the last, `dead`.
 */
export class WebhookDeliverer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = true;
  private wakeRequested = false;

  /** Statements compiled once: a delivery is recorded in a few hundred microseconds, not a millisecond. */
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly options: DelivererOptions) {}

  private prepare(sql: string): Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.options.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** New deliveries were queued: look now rather than at the next idle check. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) this.wakeRequested = true;
    else this.schedule(0);
  }

  /** Sends every delivery due now (one batch); returns how many were attempted. */
  runOnce(): Promise<number> {
    this.running ??= this.deliverDue().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(async () => {
      const sent = await this.runOnce().catch((err: unknown) => {
        this.options.logger.error({ err }, 'delivery round failed');
        return 0;
      });
      const again = sent > 0 || this.wakeRequested;
      this.wakeRequested = false;
      if (!this.stopped) this.schedule(again ? 0 : this.options.idleCheckMs ?? 1000);
    }, delayMs);
  }

  private async deliverDue(): Promise<number> {
    const due = this.claim();
    const byTarget = new Map<string, Due[]>();
    for (const delivery of due) {
      const origin = safeOrigin(delivery.target_url);
      byTarget.set(origin, [...(byTarget.get(origin) ?? []), delivery]);
    }
    const limit = this.options.perTargetConcurrency ?? 4;
    await Promise.all(
      [...byTarget.values()].map(async (queue) => {
        const worker = async () => {
          for (let d = queue.shift(); d; d = queue.shift()) await this.deliver(d);
        };
        await Promise.all(Array.from({ length: Math.min(limit, queue.length) }, worker));
      }),
    );
    return due.length;
  }

  /** Leases a batch of due deliveries so no other worker sends them meanwhile. */
  private claim(): Due[] {
    const { db, clock, timeoutMs, batchSize = 100 } = this.options;
    const now = clock.now();
    return db.transaction(() => {
      const rows = this.prepare(`SELECT d.id, d.hook_id, d.webhook_id, d.attempts, h.target_url, h.secret_cipher,
            e.id AS event_id, e.type, e.occurred_at, e.payload
          FROM deliveries d JOIN hooks h ON h.id = d.hook_id JOIN events e ON e.seq = d.event_seq
          WHERE d.status = 'pending' AND d.next_attempt_at <= ? AND d.leased_until <= ? AND h.status != 'disabled'
          ORDER BY d.next_attempt_at, d.id LIMIT ?`)
        .all(now, now, batchSize) as Due[];
      const lease = this.prepare('UPDATE deliveries SET leased_until = ? WHERE id = ?');
      for (const row of rows) lease.run(now + 2 * timeoutMs + 5000, row.id);
      return rows;
      // IMMEDIATE: take the write lock before reading, so two processes never lease one row.
    }).immediate();
  }

  private async deliver(delivery: Due): Promise<void> {
    const { clock, box, send } = this.options;
    const body = `{"type":${JSON.stringify(delivery.type)},"timestamp":${JSON.stringify(delivery.occurred_at)},"data":${delivery.payload}}`;
    let result: SendResult;
    try {
      const secret = box.open(delivery.secret_cipher);
      const headers = signedHeaders(secret, delivery.webhook_id, Math.floor(clock.now() / 1000), body);
      result = await send(delivery.target_url, body, { ...headers });
    } catch (err) {
      result = { status: null, error: (err as Error).message, durationMs: 0 };
    }
    this.record(delivery, result);
  }

  private record(delivery: Due, result: SendResult): void {
    const { db, clock, retryScheduleMs, logger } = this.options;
    const now = clock.now();
    const attempt = delivery.attempts + 1;
    const ok = result.status !== null && result.status >= 200 && result.status < 300;
    const gone = result.status === 410;
    let outcome: 'delivered' | 'disabled' | 'retrying' | 'dead';
    let nextAt: number | null = null;
    if (ok) outcome = 'delivered';
    else if (gone) outcome = 'disabled';
    else if (attempt > retryScheduleMs.length) outcome = 'dead';
    else {
      outcome = 'retrying';
      const delay = Math.max(retryScheduleMs[attempt - 1]!, Math.min(result.retryAfterMs ?? 0, maxRetryAfterMs));
      nextAt = now + delay;
    }
    db.transaction(() => {
      const status = outcome === 'retrying' ? 'pending' : outcome === 'disabled' ? 'cancelled' : outcome;
      const { changes } = db
        // A delivery cancelled meanwhile (another attempt's 410 disabled the hook) stays cancelled.
        .prepare(`UPDATE deliveries SET status = CASE WHEN status = 'cancelled' THEN status ELSE ? END, attempts = ?,
          next_attempt_at = coalesce(?, next_attempt_at), leased_until = 0 WHERE id = ?`)
        .run(status, attempt, nextAt, delivery.id);
      // The hook was deleted (or the event pruned) while this attempt was in flight: its
      // deliveries are gone, so there is nothing to record. Inserting the attempt used to fail
      // on its foreign key and reject the whole round while other attempts were still in flight.
      if (changes === 0) return;
      if (gone) {
        this.prepare(`UPDATE hooks SET status = 'disabled', status_reason = 'The receiver answered 410 Gone' WHERE id = ?`).run(delivery.hook_id);
        this.prepare(`UPDATE deliveries SET status = 'cancelled' WHERE hook_id = ? AND status = 'pending'`).run(delivery.hook_id);
      }
      this.prepare(`INSERT INTO delivery_attempts (delivery_id, hook_id, event_id, webhook_id, attempt, status_code, error, duration_ms,
          attempted_at, next_attempt_at, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
        .run(delivery.id, delivery.hook_id, delivery.event_id, delivery.webhook_id, attempt, result.status, result.error,
          result.durationMs, formatMicros(now * 1000), nextAt === null ? null : formatMicros(nextAt * 1000), outcome);
      this.prepare(`DELETE FROM delivery_attempts WHERE hook_id = ? AND id <= (SELECT id FROM delivery_attempts WHERE hook_id = ?
          ORDER BY id DESC LIMIT 1 OFFSET 100)`).run(delivery.hook_id, delivery.hook_id);
    })();
    const level = ok ? 'debug' : 'info';
    logger[level]({ hook: delivery.hook_id, event: delivery.event_id, attempt, status: result.status, error: result.error, outcome }, 'webhook attempt');
  }
}

/** Groups deliveries by origin without ever logging or keying on a URL's path or query. */
function safeOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return 'invalid';
  }
}

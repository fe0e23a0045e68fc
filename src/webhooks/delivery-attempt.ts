import { boundedLru } from '../cache/bounded-lru.js';
import type { AttemptRecord, Due } from './delivery-types.js';
import type { SendResult } from './sender.js';
import { rotatedHeaders } from './signing.js';
import { decide } from './retry-policy.js';
import type { DelivererOptions } from './deliverer-options.js';

/**
 * One attempt at a delivery: signs it (with the previous secret too during a rotation's
 * overlap), sends it and decides what the answer means (retry-policy.ts). Signing secrets stay
 * decrypted in memory, kept by their ciphertext, so an attempt costs little besides its POST.
 */
export class DeliveryAttempts {
  private readonly secrets = boundedLru<string, string>(10_000);

  constructor(private readonly options: Pick<DelivererOptions, 'clock' | 'send' | 'box' | 'retryScheduleMs' | 'logger' | 'metrics'>) {}

  /** Signs and sends one delivery; never throws. */
  async attempt(delivery: Due): Promise<AttemptRecord> {
    const { clock, send } = this.options;
    const body = `{"type":${JSON.stringify(delivery.type)},"timestamp":${JSON.stringify(delivery.occurred_at)},"data":${delivery.payload}}`;
    let result: SendResult;
    try {
      const now = clock.now();
      // During a rotation's overlap the old secret signs too (docs/webhooks.md, "Rotating the secret").
      const previous = delivery.secret_previous_cipher && now < Number(delivery.secret_previous_until) ? this.secret(delivery.secret_previous_cipher) : null;
      const headers = rotatedHeaders(this.secret(delivery.secret_cipher), previous, delivery.webhook_id, Math.floor(now / 1000), body);
      result = await send(delivery.target_url, body, { ...headers });
    } catch (err) {
      result = { status: null, error: (err as Error).message, durationMs: 0 };
    }
    return this.outcome(delivery, result);
  }

  /** A hook's signing secret, unsealed once and kept by its ciphertext. */
  private secret(cipher: string): string {
    let secret = this.secrets.get(cipher);
    if (secret === undefined) {
      secret = this.options.box.open(cipher);
      this.secrets.set(cipher, secret);
    }
    return secret;
  }

  private outcome(delivery: Due, result: SendResult): AttemptRecord {
    const now = this.options.clock.now();
    const attempt = delivery.attempts + 1;
    const { outcome, nextAttemptAt } = decide(attempt, result, this.options.retryScheduleMs, now);
    this.options.metrics?.deliveryOutcome(outcome, result.durationMs);
    // A delivered attempt is routine; every failed one (retrying, gone, dead) is worth a look.
    this.options.logger[outcome === 'delivered' ? 'debug' : 'warn'](
      { hook: delivery.hook_id, event: delivery.event_id, attempt, status: result.status, error: result.error, outcome },
      'webhook attempt',
    );
    return {
      delivery,
      attempt,
      outcome,
      statusCode: result.status,
      error: result.error,
      durationMs: result.durationMs,
      attemptedAt: now,
      nextAttemptAt,
      requestHeaders: result.requestHeaders ?? null,
      responseBody: result.responseBody ?? null,
    };
  }
}

import { describe, expect, test } from '@jest/globals';
import { loadConfig } from '../../src/config.js';
import { decide, maxRetryAfterMs } from '../../src/webhooks/retry-policy.js';

const s = 1000;
const min = 60 * s;
const h = 60 * min;
const now = 1_700_000_000_000;
const schedule = loadConfig({}).WEBHOOK_RETRY_SCHEDULE_MS;
const failed = { status: 500 };

/**
 * The schedule Svix publishes for Standard Webhooks senders ("Retry schedule": immediately,
 * then 5 seconds, 5 minutes, 30 minutes, 2 hours, 5 hours, 10 hours, 10 hours, each after the
 * previous attempt), which docs/webhooks.md promises as the default: attempt n fails → the
 * next is due this long after it; after the 8th, dead.
 */
const published: Array<[attempt: number, delayMs: number | 'dead']> = [
  [1, 5 * s],
  [2, 5 * min],
  [3, 30 * min],
  [4, 2 * h],
  [5, 5 * h],
  [6, 10 * h],
  [7, 10 * h],
  [8, 'dead'],
];

describe('retry policy', () => {
  test.each(published)('default schedule: attempt %i fails → %s', (attempt, delay) => {
    const decision = decide(attempt, failed, schedule, now);
    if (delay === 'dead') expect(decision).toEqual({ outcome: 'dead', nextAttemptAt: null });
    else expect(decision).toEqual({ outcome: 'retrying', nextAttemptAt: now + delay });
  });

  test('a delivery failing every time ends dead about 27.6 hours after it was first tried', () => {
    let at = now;
    let attempt = 1;
    for (let d = decide(attempt, failed, schedule, at); d.outcome === 'retrying'; d = decide(++attempt, failed, schedule, at)) at = d.nextAttemptAt!;
    expect(attempt).toBe(8);
    expect((at - now) / h).toBeCloseTo(27 + 35 / 60 + 5 / 3600, 6);
  });

  test.each([200, 201, 202, 204, 299])('%i is delivered, whatever the attempt', (status) => {
    for (const attempt of [1, 4, 8]) expect(decide(attempt, { status }, schedule, now)).toEqual({ outcome: 'delivered', nextAttemptAt: null });
  });

  test('410 Gone disables the hook, also on the last attempt; other statuses and no answer retry', () => {
    expect(decide(1, { status: 410 }, schedule, now).outcome).toBe('disabled');
    expect(decide(8, { status: 410 }, schedule, now).outcome).toBe('disabled');
    for (const status of [null, 100, 301, 304, 400, 404, 429, 500, 503])
      expect(decide(1, { status }, schedule, now)).toEqual({ outcome: 'retrying', nextAttemptAt: now + 5 * s });
  });

  test('Retry-After counts when longer than the schedule, never shorter, and at most a day', () => {
    expect(decide(1, { status: 503, retryAfterMs: 60 * s }, schedule, now).nextAttemptAt).toBe(now + 60 * s);
    expect(decide(2, { status: 429, retryAfterMs: 60 * s }, schedule, now).nextAttemptAt).toBe(now + 5 * min);
    expect(decide(1, { status: 503, retryAfterMs: 7 * 24 * h }, schedule, now).nextAttemptAt).toBe(now + maxRetryAfterMs);
    expect(decide(8, { status: 503, retryAfterMs: 1 }, schedule, now).outcome).toBe('dead');
  });

  test('a custom schedule: as many retries as delays; none means dead after the first failure', () => {
    expect(decide(1, failed, [10, 20], now)).toEqual({ outcome: 'retrying', nextAttemptAt: now + 10 });
    expect(decide(2, failed, [10, 20], now)).toEqual({ outcome: 'retrying', nextAttemptAt: now + 20 });
    expect(decide(3, failed, [10, 20], now).outcome).toBe('dead');
    expect(decide(1, failed, [], now).outcome).toBe('dead');
  });
});

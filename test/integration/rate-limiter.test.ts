/**
 * The per-key rate limiter against a real database (docs/keys.md, "How replicas share one
 * count"): three limiters (three replicas) on one database, on an injected clock, never grant
 * more than the shared bucket holds (capacity plus refill), get close to it, and ask the
 * database once per batch, not once per request.
 */
import { afterEach, expect, test } from '@jest/globals';
import pino from 'pino';
import { RateLimiter } from '../../src/auth/rate-limiter.js';
import { RateLimitStore, type Reservation } from '../../src/auth/rate-limit-store.js';
import type { Db } from '../../src/db/database.js';
import { ManualClock } from '../helpers/app.js';
import { openTestDatabase } from '../helpers/engine.js';

/** The real store, counting the reservations it makes. */
class CountingStore extends RateLimitStore {
  reservations = 0;
  override reserve(keyHash: string, limit: number, wanted: number, nowMs: number): Promise<Reservation> {
    this.reservations += 1;
    return super.reserve(keyHash, limit, wanted, nowMs);
  }
}

let opened: { db: Db; drop(): Promise<void> } | undefined;
afterEach(async () => {
  await opened?.db.close();
  await opened?.drop();
});

test('three replicas on one database: at most capacity + refill, at least 90 % of it, one reservation per batch', async () => {
  opened = await openTestDatabase();
  const clock = new ManualClock();
  const store = new CountingStore(opened.db);
  const logger = pino({ level: 'silent' });
  const replicas = [new RateLimiter(store, clock, logger), new RateLimiter(store, clock, logger), new RateLimiter(store, clock, logger)];
  const limit = 1200;
  const stepMs = 20; // 3 requests every 20 ms: 150 a second offered, 7.5 × the limit's 20
  const steps = 1500; // 30 s
  let granted = 0;
  for (let i = 0; i < steps; i++) {
    // Requests of a burst arrive together at each replica, as concurrent requests do.
    const answers = await Promise.all([0, 1, 2].map((r) => replicas[(i + r) % 3]!.take('key', limit)));
    granted += answers.filter((answer) => answer.allowed).length;
    for (const answer of answers) {
      expect(answer.policy).toBe('"default";q=1200;w=60');
      if (!answer.allowed) expect(answer.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
    clock.advance(stepMs);
  }
  const seconds = (steps * stepMs) / 1000;
  const ceiling = limit + (limit * seconds) / 60;
  expect(granted).toBeLessThanOrEqual(ceiling);
  expect(granted).toBeGreaterThanOrEqual(0.9 * ceiling);
  // 4,500 requests offered, ~1,800 granted: batches of up to 24, not a write per request.
  expect(store.reservations).toBeLessThan(granted / 4);
}, 120_000);

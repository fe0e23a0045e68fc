import type { LRUCache } from 'lru-cache';
import { boundedLru } from '../cache/bounded-lru.js';
import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import type { Clock } from '../time/timestamps.js';
import type { RequestWaits } from '../db/wait-budget.js';

/** An attempt under way: settle it once its key is known good or bad. */
export interface Attempt {
  /** The key was good: the attempt no longer counts against the client. */
  succeeded(): Promise<void>;
  /** The key was bad: the attempt stays counted; at the limit, the client is refused here at once. */
  failed(): void;
}

/**
 * The failed-attempt limit (docs/api.md; counted across replicas): 20 a minute per client, counted across every
 * replica in the database, in fixed one-minute windows. An attempt counts when it starts
 * (`begin`), before the key is looked up or sent upstream, so concurrent guesses cannot slip
 * past the limit; a key that turns out good gives its count back.
 *
 * A client that has reached the limit is remembered in memory until its window ends, so its
 * further requests are refused without a database round trip, even with a key already
 * verified.
 */
export class FailedAttempts {
  private readonly blocked: LRUCache<string, number>;
  private readonly pending = new Map<string, Promise<Attempt | { retryAfterSeconds: number }>>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly limit = 20,
    private readonly windowMs = 60_000,
    maxClients = 50_000,
  ) {
    this.blocked = boundedLru(maxClients);
  }

  /** Seconds until the client may try again as far as this replica knows, or 0. */
  retryAfterSeconds(client: string): number {
    const until = this.blocked.get(client);
    if (until === undefined) return 0;
    const left = until - this.clock.now();
    if (left <= 0) {
      this.blocked.delete(client);
      return 0;
    }
    return Math.max(1, Math.ceil(left / 1000));
  }

  /**
   * Counts an attempt of the client with a key (by its hash). Returns the attempt to settle,
   * or the seconds to wait when the client is over the limit (the attempt is then not made).
   * Concurrent requests of one client with one key share one attempt until it is settled:
   * a burst with a new, good key is one attempt, not a burst of guesses. `waits`: the request's
   * (db/wait-budget.ts), for the count and the attempt's settling.
   */
  begin(client: string, keyHash: string, waits?: RequestWaits): Promise<Attempt | { retryAfterSeconds: number }> {
    const id = `${client}\u0000${keyHash}`;
    const shared = this.pending.get(id);
    if (shared) return shared;
    const done = () => this.pending.delete(id);
    const started = this.count(client, this.db.within(waits)).then((result) => ('retryAfterSeconds' in result ? result : settledOnce(result, done)));
    this.pending.set(id, started);
    started.then((result) => 'retryAfterSeconds' in result && done(), done);
    return started;
  }

  private async count(client: string, db: Db): Promise<Attempt | { retryAfterSeconds: number }> {
    const now = this.clock.now();
    const expired = now - this.windowMs;
    const row = await db.kysely
      .insertInto('failed_attempts')
      .values({ client, window_start: now, failures: 1 })
      .onConflict((oc) =>
        oc.column('client').doUpdateSet({
          window_start: sql`CASE WHEN failed_attempts.window_start <= ${expired} THEN ${now} ELSE failed_attempts.window_start END`,
          failures: sql`CASE WHEN failed_attempts.window_start <= ${expired} THEN 1 ELSE failed_attempts.failures + 1 END`,
        }),
      )
      .returning(['window_start', 'failures'])
      .executeTakeFirstOrThrow();
    const windowStart = Number(row.window_start);
    if (Number(row.failures) > this.limit) {
      this.blocked.set(client, windowStart + this.windowMs);
      return { retryAfterSeconds: this.retryAfterSeconds(client) };
    }
    const failures = Number(row.failures);
    return {
      failed: () => {
        if (failures >= this.limit) this.blocked.set(client, windowStart + this.windowMs);
      },
      succeeded: async () => {
        await db.kysely
          .updateTable('failed_attempts')
          .set((eb) => ({ failures: eb('failures', '-', 1) }))
          .where('client', '=', client)
          .where('window_start', '=', windowStart)
          .where('failures', '>', 0)
          .execute();
      },
    };
  }

  /** Forgets windows that have ended (housekeeping; any replica may run it). */
  async prune(): Promise<void> {
    await this.db.kysely
      .deleteFrom('failed_attempts')
      .where('window_start', '<=', this.clock.now() - this.windowMs)
      .execute();
  }
}

/** An attempt whose first settlement counts and ends its sharing; later ones do nothing. */
function settledOnce(attempt: Attempt, done: () => void): Attempt {
  let settled = false;
  return {
    failed() {
      if (settled) return;
      settled = true;
      done();
      attempt.failed();
    },
    async succeeded() {
      if (settled) return;
      settled = true;
      done();
      await attempt.succeeded();
    },
  };
}

import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { greatest, least } from '../db/dialect.js';

/** The one-minute window of every per-key limit, in microseconds. */
export const windowMicros = 60_000_000;

/** What one reservation got: tokens granted (0 = the key is over its limit) and the key's bucket afterwards. */
export interface Reservation {
  granted: number;
  /** The GCRA theoretical arrival time after this reservation (µs): the bucket is full again then. */
  tatMicros: number;
}

/**
 * The shared state of the per-key rate limit (docs/keys.md): one row per key hash in
 * `rate_limits`, a GCRA theoretical arrival time (`tat`). A key may take a token at `now` while
 * `tat - now` stays within the window; each token moves `tat` on by one emission interval
 * (window ÷ limit). That is a token bucket holding one minute's quota, refilled continuously.
 *
 * `reserve` takes up to `wanted` tokens in one atomic statement (an upsert whose new values are
 * computed from the row as it was, under the row's lock), so replicas never grant the same
 * token twice, whatever their number: the count can only be too strict, never too generous.
 * The only writer of `rate_limits`.
 */
/** Where the buckets are kept: the database every replica shares, or this process alone. */
export interface RateLimitBuckets {
  reserve(keyHash: string, limitPerMinute: number, wanted: number, nowMs: number): Promise<Reservation>;
  prune(nowMs: number): Promise<void>;
}

export class RateLimitStore implements RateLimitBuckets {
  constructor(private readonly db: Db) {}

  async reserve(keyHash: string, limitPerMinute: number, wanted: number, nowMs: number): Promise<Reservation> {
    // Rounded up: a replica can only under-grant by the rounding.
    const interval = Math.ceil(windowMicros / limitPerMinute);
    const now = Math.round(nowMs * 1000);
    const first = Math.min(wanted, limitPerMinute);
    const int = (value: number) => sql`CAST(${value} AS BIGINT)`;
    const engine = this.db.engine;
    // What the bucket holds at `now` (whole tokens; never negative, even with a replica whose clock is behind).
    const base = greatest(engine, sql`rate_limits.tat`, int(now));
    const available = greatest(engine, int(0), sql`(${int(now + windowMicros)} - ${base}) / ${int(interval)}`);
    const granted = least(engine, int(wanted), available);
    const result = await sql<{ tat: number | string; granted: number | string }>`
      INSERT INTO rate_limits (key_hash, tat, granted) VALUES (${keyHash}, ${int(now + first * interval)}, ${int(first)})
      ON CONFLICT (key_hash) DO UPDATE SET tat = ${base} + ${granted} * ${int(interval)}, granted = ${granted}
      RETURNING tat, granted`.execute(this.db.kysely);
    const row = result.rows[0]!;
    return { granted: Number(row.granted), tatMicros: Number(row.tat) };
  }

  /** Forgets keys whose buckets have been full for a while (housekeeping; any replica may run it). */
  async prune(nowMs: number): Promise<void> {
    await this.db.kysely
      .deleteFrom('rate_limits')
      .where('tat', '<', Math.round(nowMs * 1000) - windowMicros)
      .execute();
  }
}

/**
 * The same buckets in this process's memory, for a SQLite database: one process serves a SQLite
 * file (several replicas need PostgreSQL), so its count is the whole count, and a request never
 * waits for SQLite's one writer to take a token (a write per quiet key's request, queued behind
 * a mass outage's writes, is what the known-key look-up was made write-free to avoid). Same
 * arithmetic as the database's statement.
 */
export class MemoryRateLimitStore implements RateLimitBuckets {
  private readonly tats = new Map<string, number>();

  async reserve(keyHash: string, limitPerMinute: number, wanted: number, nowMs: number): Promise<Reservation> {
    const interval = Math.ceil(windowMicros / limitPerMinute);
    const now = Math.round(nowMs * 1000);
    const base = Math.max(this.tats.get(keyHash) ?? now, now);
    const granted = Math.min(wanted, Math.max(0, Math.floor((now + windowMicros - base) / interval)));
    const tat = base + granted * interval;
    this.tats.set(keyHash, tat);
    return { granted, tatMicros: tat };
  }

  async prune(nowMs: number): Promise<void> {
    const full = Math.round(nowMs * 1000) - windowMicros;
    for (const [keyHash, tat] of this.tats) if (tat < full) this.tats.delete(keyHash);
  }
}

import { boundedLru } from '../cache/bounded-lru.js';
import type { Logger } from 'pino';
import type { Clock } from '../time/timestamps.js';
import { windowMicros, type RateLimitBuckets } from './rate-limit-store.js';

/**
 * The per-key rate limit as one replica applies it (docs/keys.md): the key's tokens live in
 * the database (`RateLimitStore`), and this replica takes them in small reserved batches,
 * serving requests from its local reservation with no database round trip. A reservation is
 * taken before the tokens are used, so replicas together never grant more than the shared
 * bucket holds; what a replica holds and has not used yet is at most one batch (2 % of the
 * limit), which is the whole of the limit's error.
 *
 * A batch starts at one token and doubles while the key keeps using them up within
 * `busyMs`, up to the maximum: a quiet key costs one write per request (it makes few), a busy
 * one one write per batch. The next batch is asked for in the background when a quarter of
 * the current one is left, so a busy key rarely waits. A key found over its limit is refused
 * locally, without asking again, until a batch has refilled (GCRA: known exactly): held at its
 * limit, it gets its refill a batch at a time, still one write per batch.
 */
interface Bucket {
  limit: number;
  /** `"default";q=<limit>;w=60`, built once per limit. */
  policy: string;
  /** Tokens reserved by this replica, not used yet. */
  reserved: number;
  /** The shared bucket's theoretical arrival time after this replica's last reservation (µs). */
  tatMicros: number;
  batch: number;
  lastReserveMs: number;
  /** Refused locally until then: the key's next token is not due before. */
  deniedUntilMs: number;
  /** The database could not be asked: requests pass until then (docs/keys.md, "When the database is away"). */
  openUntilMs: number;
  pending: Promise<void> | null;
}

/** The headers of one answer (draft-ietf-httpapi-ratelimit-headers structured fields). */
export interface RateLimitAnswer {
  allowed: boolean;
  policy: string;
  /** `"default";r=<left>;t=<seconds until the quota is whole again>`. */
  state: string;
  /** Seconds until the next request may pass (a refusal's `Retry-After`). */
  retryAfterSeconds: number;
}

/** A batch is at most this share of the limit. */
const batchShare = 0.02;
/** A key that used its last reservation up within this is busy: its next batch doubles. */
const busyMs = 5000;
/** After the database failed a reservation, requests of the key pass this long before it is asked again. */
const openAfterErrorMs = 5000;

export class RateLimiter {
  private readonly buckets = boundedLru<string, Bucket>(100_000);

  constructor(
    private readonly store: RateLimitBuckets,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * Takes one request's token for the key (by hash) under `limit` requests a minute. Resolves
   * synchronously when this replica holds a reserved token (the hot path: a decrement and two
   * header strings).
   */
  take(keyHash: string, limit: number): RateLimitAnswer | Promise<RateLimitAnswer> {
    const now = this.clock.now();
    const bucket = this.bucketOf(keyHash, limit);
    if (bucket.reserved > 0) {
      bucket.reserved -= 1;
      if (bucket.reserved <= bucket.batch >> 2 && bucket.pending === null) this.refill(keyHash, bucket, now);
      return this.answer(bucket, true, now);
    }
    if (bucket.openUntilMs > now) return this.answer(bucket, true, now);
    if (bucket.deniedUntilMs > now) return this.answer(bucket, false, now);
    return this.waitForToken(keyHash, bucket);
  }

  private async waitForToken(keyHash: string, bucket: Bucket): Promise<RateLimitAnswer> {
    for (;;) {
      const now = this.clock.now();
      if (bucket.reserved > 0) {
        bucket.reserved -= 1;
        return this.answer(bucket, true, now);
      }
      if (bucket.openUntilMs > now) return this.answer(bucket, true, now);
      if (bucket.deniedUntilMs > now) return this.answer(bucket, false, now);
      await (bucket.pending ?? this.refill(keyHash, bucket, now));
    }
  }

  private bucketOf(keyHash: string, limit: number): Bucket {
    let bucket = this.buckets.get(keyHash);
    if (bucket === undefined) {
      bucket = { limit, policy: '', reserved: 0, tatMicros: 0, batch: 1, lastReserveMs: 0, deniedUntilMs: 0, openUntilMs: 0, pending: null };
      this.buckets.set(keyHash, bucket);
    }
    if (bucket.policy === '' || bucket.limit !== limit) {
      // A new limit (an operator changed it) starts over with small batches; tokens already reserved stay valid.
      bucket.limit = limit;
      bucket.policy = `"default";q=${limit};w=60`;
      bucket.reserved = Math.min(bucket.reserved, maxBatch(limit));
      bucket.batch = 1;
      bucket.deniedUntilMs = 0;
    }
    return bucket;
  }

  /** Reserves the key's next batch (one at a time per key). */
  private refill(keyHash: string, bucket: Bucket, now: number): Promise<void> {
    bucket.batch = now - bucket.lastReserveMs < busyMs ? Math.min(maxBatch(bucket.limit), bucket.batch * 2) : 1;
    bucket.lastReserveMs = now;
    const wanted = bucket.batch;
    const interval = Math.ceil(windowMicros / bucket.limit);
    const done = this.store.reserve(keyHash, bucket.limit, wanted, now).then(
      (got) => {
        bucket.reserved += got.granted;
        bucket.tatMicros = got.tatMicros;
        // Over the limit: asked again once a whole batch has refilled (a token is due after one
        // interval; a batch after `wanted`), so a key held at its limit costs one write per batch too.
        if (got.granted === 0) bucket.deniedUntilMs = Math.max(now + 1, Math.ceil((got.tatMicros - windowMicros + wanted * interval) / 1000));
      },
      (err: unknown) => {
        bucket.openUntilMs = now + openAfterErrorMs;
        this.logger.warn({ err: (err as Error).message }, 'rate limit not checked: the database did not answer');
      },
    );
    bucket.pending = done.finally(() => {
      bucket.pending = null;
    });
    return bucket.pending;
  }

  private answer(bucket: Bucket, allowed: boolean, now: number): RateLimitAnswer {
    const nowMicros = now * 1000;
    const ahead = Math.max(0, bucket.tatMicros - nowMicros);
    const interval = windowMicros / bucket.limit;
    const shared = Math.floor((windowMicros - ahead) / interval);
    const left = allowed ? Math.min(bucket.limit, Math.max(0, shared) + bucket.reserved) : 0;
    const retryAfterSeconds = allowed ? 0 : Math.max(1, Math.ceil((bucket.deniedUntilMs - now) / 1000));
    return { allowed, policy: bucket.policy, state: `"default";r=${left};t=${Math.ceil(ahead / 1_000_000)}`, retryAfterSeconds };
  }
}

function maxBatch(limit: number): number {
  return Math.max(1, Math.floor(limit * batchShare));
}

import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import type { Clock } from '../time/timestamps.js';
import type { Metrics } from '../metrics/metrics.js';
import type { CounterHandle } from '../metrics/collector.js';

/** How a value was served; shown to clients as `X-Cache`. */
export type CacheState = 'HIT' | 'MISS' | 'STALE';

export interface Loaded<T> {
  value: T;
  /** Approximate bytes held, for the cache's byte bound. */
  size: number;
}

export interface CachedValue<T> {
  value: T;
  state: CacheState;
}

export interface CachedLoaderOptions {
  clock: Clock;
  logger: Logger;
  /** Freshness: younger entries are served as they are. 0 disables caching (not single-flight). */
  ttlMs: number;
  /**
   * Serve a stale entry at once while refreshing it (default true). Off where loads are cheap
   * and local (embedded mode), so a change is seen within the TTL, not up to twice it.
   */
  staleWhileRevalidate?: boolean;
  maxEntries?: number;
  maxBytes?: number;
  /** Counts hits, misses and stale answers under this cache name (a fixed word, never a key). */
  metrics?: { metrics: Metrics; name: string };
}

interface Entry<T> {
  value: T;
  fetchedAt: number;
  size: number;
  /** A loaded entry: the keys of the values derived from it, dropped with it. */
  derived?: Set<string>;
  /** A derived value: the key of the entry it was derived from. */
  from?: string;
}

/** Separates a derived value's key from its source's (never in a source key, which is text). */
const derivedSeparator = '\u0000';

/**
 * A TTL cache in front of an expensive loader (an upstream call), with the contract:
 * - single-flight: concurrent misses for one key share one load;
 * - fresh (age < ttl): served from memory (`HIT`);
 * - stale-while-revalidate (ttl ≤ age < 2·ttl): served at once (`STALE`) while one
 *   background load refreshes it;
 * - older: loaded now (`MISS`); if that load fails and the entry is younger than 10·ttl,
 *   the last good copy is served (`STALE`, stale-if-error), otherwise the error is thrown;
 *   a 4xx AppError (the upstream's verdict: 401, 403, 404) is always thrown and drops the
 *   entry, also when a background refresh gets it;
 * - errors are never cached; bounded by entry count and bytes (least recently used first);
 * - values derived from an entry (the rendered pages of an option list) are kept beside it in
 *   the same LRU and bound, and dropped with it (`derive`).
 */
export class CachedLoader {
  private readonly entries: LRUCache<string, Entry<unknown>>;
  private readonly inflight = new Map<string, Promise<Entry<unknown>>>();
  private readonly deriving = new Map<string, { source: Entry<unknown>; promise: Promise<unknown> }>();
  private readonly counted: Record<CacheState, CounterHandle> | undefined;

  constructor(private readonly options: CachedLoaderOptions) {
    const c = options.metrics?.metrics.cacheCounters(options.metrics.name);
    this.counted = c && { HIT: c.hit, MISS: c.miss, STALE: c.stale };
    this.entries = new LRUCache<string, Entry<unknown>>({
      max: options.maxEntries ?? 5000,
      maxSize: options.maxBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (entry) => Math.max(1, entry.size),
      // After the LRU is consistent again: a source entry takes its derived values with it
      // (refreshed, evicted or deleted); a derived value leaves its source's list.
      disposeAfter: (entry, key, reason) => {
        if (entry.derived) for (const derived of entry.derived) this.entries.delete(derived);
        else if (entry.from !== undefined && reason !== 'set') this.entries.peek(entry.from)?.derived?.delete(key);
      },
    });
  }

  /** Bytes held (by the entries' sizes) and its bound, and how many entries. */
  get usage(): { bytes: number; maxBytes: number; entries: number } {
    return { bytes: this.entries.calculatedSize, maxBytes: this.entries.maxSize, entries: this.entries.size };
  }

  get ttlMs(): number {
    return this.options.ttlMs;
  }

  async get<T>(key: string, load: () => Promise<Loaded<T>>): Promise<CachedValue<T>> {
    const { ttlMs, clock } = this.options;
    const entry = this.entries.get(key) as Entry<T> | undefined;
    const age = entry ? clock.now() - entry.fetchedAt : Infinity;
    if (entry && age < ttlMs) return this.served(entry.value, 'HIT');
    if (entry && age < 2 * ttlMs && this.options.staleWhileRevalidate !== false) {
      this.refresh(key, load).catch((err: unknown) => {
        this.options.logger.warn({ err: describe(err), cacheKey: redactKey(key) }, 'background refresh failed');
      });
      return this.served(entry.value, 'STALE');
    }
    try {
      const fresh = await this.refresh(key, load);
      return this.served(fresh.value, 'MISS');
    } catch (err) {
      // Stale-if-error covers an upstream that is down (5xx, timeout, bad body), not a 4xx
      // verdict it gave: a revoked key (401) or a deleted device (404) must not keep being
      // served the last good copy for up to 10×TTL.
      if (entry && age < 10 * ttlMs && !isVerdict(err)) return this.served(entry.value, 'STALE');
      throw err;
    }
  }

  /**
   * The value cached under `key` while it is fresh and `usable`, as `get` would answer it (a
   * HIT, counted), without an await; undefined when `get` must be asked (nothing counted then).
   */
  fresh<T>(key: string, usable: (value: T) => boolean = () => true): CachedValue<T> | undefined {
    const entry = this.entries.get(key) as Entry<T> | undefined;
    if (!entry || this.options.clock.now() - entry.fetchedAt >= this.options.ttlMs || !usable(entry.value)) return undefined;
    return this.served(entry.value, 'HIT');
  }

  /** What `derive` keeps for `source` (the value under `key`) and `part`, when it is kept; else undefined. */
  derived<T>(key: string, source: unknown, part: string): T | undefined {
    const from = this.entries.peek(key);
    if (!from || from.value !== source) return undefined;
    return this.entries.get(`${key}${derivedSeparator}${part}`)?.value as T | undefined;
  }

  private served<T>(value: T, state: CacheState): CachedValue<T> {
    this.counted?.[state].inc();
    return { value, state };
  }

  /**
   * A value computed from `source`, the value cached under `key` (a rendered page of an option
   * list, `part` naming the page): kept in the same LRU, counted in the same byte bound and
   * evicted on its own, dropped with its source when that is refreshed or evicted. Concurrent
   * calls share one computation. If `source` is no longer what `key` holds (refreshed
   * meanwhile, or caching is off), the value is computed and not kept.
   */
  async derive<T>(key: string, source: unknown, part: string, compute: () => Promise<Loaded<T>>): Promise<T> {
    const from = this.entries.peek(key);
    if (!from || from.value !== source) return (await compute()).value;
    const derivedKey = `${key}${derivedSeparator}${part}`;
    const kept = this.entries.get(derivedKey);
    if (kept) return kept.value as T;
    const running = this.deriving.get(derivedKey);
    if (running?.source === from) return running.promise as Promise<T>;
    const promise = compute()
      .then(({ value, size }) => {
        if (this.entries.peek(key) === from) {
          this.entries.set(derivedKey, { value, fetchedAt: from.fetchedAt, size, from: key });
          // Storing it may have evicted its source (then it goes too), or it was too big to keep.
          if (this.entries.peek(key) !== from) this.entries.delete(derivedKey);
          else if (this.entries.has(derivedKey)) (from.derived ??= new Set()).add(derivedKey);
        }
        return value;
      })
      .finally(() => {
        if (this.deriving.get(derivedKey)?.promise === promise) this.deriving.delete(derivedKey);
      });
    this.deriving.set(derivedKey, { source: from, promise });
    return promise;
  }

  /** Forgets one key (or every key starting with a prefix). */
  delete(key: string, prefix = false): void {
    if (!prefix) {
      this.entries.delete(key);
      return;
    }
    for (const k of [...this.entries.keys()]) if (k.startsWith(key)) this.entries.delete(k);
  }

  private refresh<T>(key: string, load: () => Promise<Loaded<T>>): Promise<Entry<T>> {
    const running = this.inflight.get(key) as Promise<Entry<T>> | undefined;
    if (running) return running;
    const started = this.options.clock.now();
    const promise = load()
      .then((loaded) => {
        const entry: Entry<T> = { value: loaded.value, fetchedAt: started, size: loaded.size };
        if (this.options.ttlMs > 0) this.entries.set(key, entry);
        return entry;
      })
      .catch((err: unknown) => {
        // The upstream's verdict (e.g. the device is gone): stop serving the old copy.
        if (isVerdict(err)) this.entries.delete(key);
        throw err;
      })
      .finally(() => this.inflight.delete(key));
    this.inflight.set(key, promise);
    return promise;
  }
}

/** A 4xx answer of the upstream (401, 403, 404 …), as opposed to it being unavailable. */
function isVerdict(err: unknown): boolean {
  return err instanceof AppError && err.status < 500;
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Cache keys start with a key hash, then say what is cached, then its ids and parameters
 * (anything a user typed, a pasted key included): log the hash's first characters and the kind.
 */
function redactKey(key: string): string {
  return key.replace(/^([0-9a-f]{8})[0-9a-f]{56}/, '$1…').replace(/^([^|]*\|[A-Za-z_-]*)[|/?].*$/s, '$1…');
}

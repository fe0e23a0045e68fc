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
}

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
 * - errors are never cached; bounded by entry count and bytes (least recently used first).
 */
export class CachedLoader {
  private readonly entries: LRUCache<string, Entry<unknown>>;
  private readonly inflight = new Map<string, Promise<Entry<unknown>>>();
  private readonly counted: Record<CacheState, CounterHandle> | undefined;

  constructor(private readonly options: CachedLoaderOptions) {
    const c = options.metrics?.metrics.cacheCounters(options.metrics.name);
    this.counted = c && { HIT: c.hit, MISS: c.miss, STALE: c.stale };
    this.entries = new LRUCache<string, Entry<unknown>>({
      max: options.maxEntries ?? 5000,
      maxSize: options.maxBytes ?? 64 * 1024 * 1024,
      sizeCalculation: (entry) => Math.max(1, entry.size),
    });
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

  private served<T>(value: T, state: CacheState): CachedValue<T> {
    this.counted?.[state].inc();
    return { value, state };
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

import { LRUCache } from 'lru-cache';

/**
 * An LRU map of at most `entries` entries whose memory grows with what it holds.
 *
 * lru-cache's `max` allocates its index arrays for every slot when the cache is made: about
 * 23 ms of CPU and a few MB for 100,000 slots, paid by each app built (the test suite builds
 * thousands) for caches that mostly hold a handful of keys. Counting each entry as size 1
 * against `maxSize` gives the same bound (the least recently used entry leaves first) with
 * arrays that grow as entries come; a look-up costs the same.
 */
export function boundedLru<K extends NonNullable<unknown>, V extends NonNullable<unknown>>(
  entries: number,
  options: Omit<LRUCache.Options<K, V, unknown>, 'max' | 'maxSize' | 'sizeCalculation'> = {},
): LRUCache<K, V> {
  if (!Number.isInteger(entries) || entries < 1) throw new RangeError(`a bounded LRU needs at least one entry, not ${entries}`);
  return new LRUCache<K, V>({ ...options, maxSize: entries, sizeCalculation: () => 1 } as LRUCache.Options<K, V, unknown>);
}

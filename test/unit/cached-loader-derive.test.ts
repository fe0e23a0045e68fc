import { describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { CachedLoader, type Loaded } from '../../src/cache/cached-loader.js';
import { ManualClock } from '../helpers/app.js';

/**
 * Values derived from a cached one (the rendered pages of an option list, docs/options.md
 * "Memory and the event loop"): kept beside it in the same LRU and byte bound, evicted on their
 * own, dropped with it, never kept for a value the cache no longer holds.
 */

const logger = pino({ level: 'silent' });
const TTL = 1000;

function setup(options: { ttlMs?: number; maxBytes?: number } = {}) {
  const clock = new ManualClock();
  const cache = new CachedLoader({ clock, logger, ttlMs: options.ttlMs ?? TTL, maxBytes: options.maxBytes });
  return { clock, cache };
}

/** A source loader answering a fresh object (`{ version }`) of `size` bytes per call. */
function source(size: number) {
  let version = 0;
  return async (): Promise<Loaded<{ version: number }>> => ({ value: { version: ++version }, size });
}

/** A deriver that counts its calls and answers `<part>@<version>` of `size` bytes. */
function deriver() {
  const state = {
    calls: 0,
    of: (from: { version: number }, part: string, size: number) => async (): Promise<Loaded<string>> => {
      state.calls += 1;
      return { value: `${part}@${from.version}`, size };
    },
  };
  return state;
}

describe('CachedLoader.derive', () => {
  test('is computed once per part and counted in the byte bound', async () => {
    const { cache } = setup();
    const { value: list } = await cache.get('k', source(100));
    const d = deriver();
    expect(await cache.derive('k', list, 'p1', d.of(list, 'p1', 50))).toBe('p1@1');
    expect(await cache.derive('k', list, 'p1', d.of(list, 'p1', 50))).toBe('p1@1');
    expect(await cache.derive('k', list, 'p2', d.of(list, 'p2', 30))).toBe('p2@1');
    expect(d.calls).toBe(2);
    expect(cache.usage).toEqual({ bytes: 180, maxBytes: 64 * 1024 * 1024, entries: 3 });
  });

  test('concurrent calls for one part share one computation', async () => {
    const { cache } = setup();
    const { value: list } = await cache.get('k', source(100));
    const d = deriver();
    const all = await Promise.all([1, 2, 3].map(() => cache.derive('k', list, 'p', d.of(list, 'p', 10))));
    expect(all).toEqual(['p@1', 'p@1', 'p@1']);
    expect(d.calls).toBe(1);
  });

  test('dropped with its source when that is refreshed: derived again from the new value', async () => {
    const { cache, clock } = setup();
    const load = source(100);
    const { value: first } = await cache.get('k', load);
    const d = deriver();
    await cache.derive('k', first, 'p', d.of(first, 'p', 50));
    clock.advance(3 * TTL);
    const { value: second, state } = await cache.get('k', load);
    expect(state).toBe('MISS');
    expect(cache.usage.bytes).toBe(100);
    expect(await cache.derive('k', second, 'p', d.of(second, 'p', 50))).toBe('p@2');
    expect(d.calls).toBe(2);
  });

  test('a value the cache no longer holds (refreshed meanwhile) is derived but not kept', async () => {
    const { cache, clock } = setup();
    const load = source(100);
    const { value: old } = await cache.get('k', load);
    clock.advance(3 * TTL);
    await cache.get('k', load);
    const d = deriver();
    expect(await cache.derive('k', old, 'p', d.of(old, 'p', 50))).toBe('p@1');
    expect(await cache.derive('k', old, 'p', d.of(old, 'p', 50))).toBe('p@1');
    expect(d.calls).toBe(2);
    expect(cache.usage).toMatchObject({ bytes: 100, entries: 1 });
  });

  test('over the byte bound, the least recently used parts go first and the source stays', async () => {
    const { cache } = setup({ maxBytes: 1000 });
    const d = deriver();
    for (let i = 0; i < 20; i++) {
      // A request: the list (touched), then a page of it.
      const { value: list, state } = await cache.get('k', source(400));
      expect(state).toBe(i === 0 ? 'MISS' : 'HIT');
      await cache.derive('k', list, `p${i}`, d.of(list, `p${i}`, 250));
      expect(cache.usage.bytes).toBeLessThanOrEqual(1000);
    }
    // The list and the two most recent pages fit.
    expect(cache.usage).toMatchObject({ bytes: 900, entries: 3 });
    const { value: list } = await cache.get('k', source(400));
    await cache.derive('k', list, 'p19', d.of(list, 'p19', 250));
    await cache.derive('k', list, 'p0', d.of(list, 'p0', 250));
    expect(d.calls).toBe(21);
  });

  test('evicting or deleting the source takes its derived values with it', async () => {
    const { cache } = setup({ maxBytes: 1000 });
    const { value: a } = await cache.get('a', source(300));
    await cache.derive('a', a, 'p', deriver().of(a, 'p', 300));
    // A bigger newcomer pushes out the least recently used: the source `a` (its page was touched later).
    await cache.get('b', source(700));
    expect(cache.usage).toMatchObject({ bytes: 700, entries: 1 });
    const { value: b } = await cache.get('b', source(700));
    await cache.derive('b', b, 'p', deriver().of(b, 'p', 100));
    cache.delete('b');
    expect(cache.usage).toMatchObject({ bytes: 0, entries: 0 });
  });

  test('caching off (TTL 0): derived every time, nothing kept', async () => {
    const { cache } = setup({ ttlMs: 0 });
    const { value: list } = await cache.get('k', source(100));
    const d = deriver();
    await cache.derive('k', list, 'p', d.of(list, 'p', 10));
    await cache.derive('k', list, 'p', d.of(list, 'p', 10));
    expect(d.calls).toBe(2);
    expect(cache.usage.entries).toBe(0);
  });
});

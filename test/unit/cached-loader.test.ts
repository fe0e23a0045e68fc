import { describe, expect, test } from '@jest/globals';
import { pino } from 'pino';
import { CachedLoader, type Loaded } from '../../src/cache/cached-loader.js';
import { AppError } from '../../src/errors.js';
import { ManualClock } from '../helpers/app.js';

/**
 * The cache in front of upstream calls (docs/upstream.md: single-flight, TTL,
 * stale-while-revalidate, stale-if-error up to 10×TTL, errors not cached, bounded).
 * Time is a ManualClock; loaders are controlled by hand with deferred promises.
 */

const logger = pino({ level: 'silent' });
const TTL = 1000;

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(err: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A loader that counts calls and answers `value-<n>` (or what `next` says). */
function counter(size = 10) {
  const state = {
    calls: 0,
    fail: null as unknown,
    load: async (): Promise<Loaded<string>> => {
      state.calls += 1;
      if (state.fail) throw state.fail;
      return { value: `value-${state.calls}`, size };
    },
  };
  return state;
}

function setup(options: { ttlMs?: number; maxEntries?: number; maxBytes?: number } = {}) {
  const clock = new ManualClock();
  const cache = new CachedLoader({ clock, logger, ttlMs: options.ttlMs ?? TTL, maxEntries: options.maxEntries, maxBytes: options.maxBytes });
  return { clock, cache };
}

/** Lets pending promise callbacks (a background refresh) run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('CachedLoader', () => {
  test('single-flight: concurrent misses for one key share one load and get the same value', async () => {
    const { cache } = setup();
    const gate = deferred<Loaded<{ n: number }>>();
    let calls = 0;
    const load = () => {
      calls += 1;
      return gate.promise;
    };
    const pending = Array.from({ length: 50 }, () => cache.get('k', load));
    expect(calls).toBe(1);
    const shared = { n: 1 };
    gate.resolve({ value: shared, size: 1 });
    const results = await Promise.all(pending);
    expect(calls).toBe(1);
    for (const r of results) {
      expect(r.value).toBe(shared);
      expect(r.state).toBe('MISS');
    }
  });

  test('different keys do not share a load', async () => {
    const { cache } = setup();
    const loader = counter();
    const [a, b] = await Promise.all([cache.get('a', loader.load), cache.get('b', loader.load)]);
    expect(loader.calls).toBe(2);
    expect(a.value).not.toBe(b.value);
  });

  test('a failed single-flight load rejects every waiter, and the next call loads again', async () => {
    const { cache } = setup();
    const gate = deferred<Loaded<string>>();
    let calls = 0;
    const load = () => {
      calls += 1;
      return calls === 1 ? gate.promise : Promise.resolve({ value: 'ok', size: 1 });
    };
    const pending = [cache.get('k', load), cache.get('k', load), cache.get('k', load)];
    gate.reject(new Error('boom'));
    for (const p of pending) await expect(p).rejects.toThrow('boom');
    expect(calls).toBe(1);
    await expect(cache.get('k', load)).resolves.toEqual({ value: 'ok', state: 'MISS' });
    expect(calls).toBe(2);
  });

  test('HIT within the TTL, without calling the loader', async () => {
    const { cache, clock } = setup();
    const loader = counter();
    expect(await cache.get('k', loader.load)).toEqual({ value: 'value-1', state: 'MISS' });
    clock.advance(TTL - 1);
    expect(await cache.get('k', loader.load)).toEqual({ value: 'value-1', state: 'HIT' });
    expect(loader.calls).toBe(1);
  });

  test('between TTL and 2×TTL: STALE at once and exactly one background refresh', async () => {
    const { cache, clock } = setup();
    await cache.get('k', async () => ({ value: 'old', size: 1 }));
    clock.advance(TTL);
    const gate = deferred<Loaded<string>>();
    let calls = 0;
    const load = () => {
      calls += 1;
      return gate.promise;
    };
    // The answers come before the refresh finishes: nobody waits for it.
    expect(await cache.get('k', load)).toEqual({ value: 'old', state: 'STALE' });
    clock.advance(TTL - 1); // age 2×TTL − 1: still the revalidate window
    expect(await cache.get('k', load)).toEqual({ value: 'old', state: 'STALE' });
    expect(calls).toBe(1);
    gate.resolve({ value: 'new', size: 1 });
    await settle();
    expect(await cache.get('k', load)).toEqual({ value: 'new', state: 'HIT' });
    expect(calls).toBe(1);
  });

  test('a failing background refresh is not thrown to the caller; the copy stays and the next call retries', async () => {
    const { cache, clock } = setup();
    await cache.get('k', async () => ({ value: 'old', size: 1 }));
    clock.advance(TTL + 1);
    let calls = 0;
    const failing = async (): Promise<Loaded<string>> => {
      calls += 1;
      throw new Error('down');
    };
    expect(await cache.get('k', failing)).toEqual({ value: 'old', state: 'STALE' });
    await settle();
    expect(await cache.get('k', failing)).toEqual({ value: 'old', state: 'STALE' });
    await settle();
    expect(calls).toBe(2);
  });

  test('the age counts from when the load started', async () => {
    const { cache, clock } = setup();
    const gate = deferred<Loaded<string>>();
    const first = cache.get('k', () => gate.promise);
    clock.advance(TTL / 2);
    gate.resolve({ value: 'v', size: 1 });
    await first;
    clock.advance(TTL / 2 - 1);
    expect((await cache.get('k', counter().load)).state).toBe('HIT');
    clock.advance(1);
    expect((await cache.get('k', counter().load)).state).toBe('STALE');
  });

  test('at 2×TTL and later: loaded synchronously (MISS)', async () => {
    const { cache, clock } = setup();
    const loader = counter();
    await cache.get('k', loader.load);
    clock.advance(2 * TTL);
    expect(await cache.get('k', loader.load)).toEqual({ value: 'value-2', state: 'MISS' });
    expect(loader.calls).toBe(2);
    expect(await cache.get('k', loader.load)).toEqual({ value: 'value-2', state: 'HIT' });
  });

  test('stale-if-error: past 2×TTL a failing load serves the last good copy until 10×TTL, then throws', async () => {
    const { cache, clock } = setup();
    const loader = counter();
    await cache.get('k', loader.load);
    loader.fail = new AppError('upstream_unavailable', 'Upstream unavailable');
    clock.advance(2 * TTL);
    expect(await cache.get('k', loader.load)).toEqual({ value: 'value-1', state: 'STALE' });
    clock.advance(8 * TTL - 1); // age 10×TTL − 1
    expect(await cache.get('k', loader.load)).toEqual({ value: 'value-1', state: 'STALE' });
    clock.advance(1); // age 10×TTL
    await expect(cache.get('k', loader.load)).rejects.toThrow('Upstream unavailable');
    // The upstream is back: fresh data, the error was not cached.
    loader.fail = null;
    const back = await cache.get('k', loader.load);
    expect(back.state).toBe('MISS');
    expect(back.value).toMatch(/^value-/);
  });

  test('stale-if-error also covers timeouts; a 4xx verdict of the upstream is thrown and drops the copy', async () => {
    const { cache, clock } = setup();
    const loader = counter();
    await cache.get('k', loader.load);
    clock.advance(3 * TTL);
    loader.fail = new AppError('upstream_timeout', 'Upstream timeout');
    expect((await cache.get('k', loader.load)).state).toBe('STALE');
    loader.fail = new AppError('not_found', 'Device not found');
    await expect(cache.get('k', loader.load)).rejects.toThrow('Device not found');
    // Gone for good: even a later outage does not bring the old copy back.
    loader.fail = new AppError('upstream_unavailable', 'Upstream unavailable');
    await expect(cache.get('k', loader.load)).rejects.toThrow('Upstream unavailable');
  });

  test('errors are not cached: every call after a failure loads again', async () => {
    const { cache } = setup();
    const loader = counter();
    loader.fail = new Error('boom');
    await expect(cache.get('k', loader.load)).rejects.toThrow('boom');
    await expect(cache.get('k', loader.load)).rejects.toThrow('boom');
    expect(loader.calls).toBe(2);
    loader.fail = null;
    expect(await cache.get('k', loader.load)).toEqual({ value: 'value-3', state: 'MISS' });
  });

  test('ttl 0 caches nothing but still single-flights concurrent calls', async () => {
    const { cache } = setup({ ttlMs: 0 });
    const gate = deferred<Loaded<string>>();
    let calls = 0;
    const load = () => {
      calls += 1;
      return calls === 1 ? gate.promise : Promise.resolve({ value: `v${calls}`, size: 1 });
    };
    const pending = [cache.get('k', load), cache.get('k', load), cache.get('k', load)];
    gate.resolve({ value: 'v1', size: 1 });
    expect((await Promise.all(pending)).map((r) => r.value)).toEqual(['v1', 'v1', 'v1']);
    expect(calls).toBe(1);
    expect(await cache.get('k', load)).toEqual({ value: 'v2', state: 'MISS' });
    expect(await cache.get('k', load)).toEqual({ value: 'v3', state: 'MISS' });
    expect(calls).toBe(3);
  });

  test('the byte bound evicts the least recently used entries', async () => {
    const { cache } = setup({ maxBytes: 100 });
    const a = counter(40);
    const b = counter(40);
    const c = counter(40);
    await cache.get('a', a.load);
    await cache.get('b', b.load);
    await cache.get('a', a.load); // a is now more recently used than b
    expect(a.calls).toBe(1);
    await cache.get('c', c.load); // 120 bytes > 100: b goes
    expect((await cache.get('a', a.load)).state).toBe('HIT');
    expect((await cache.get('c', c.load)).state).toBe('HIT');
    expect((await cache.get('b', b.load)).state).toBe('MISS');
    expect(b.calls).toBe(2);
  });

  test('an entry larger than the whole byte bound is served but not kept', async () => {
    const { cache } = setup({ maxBytes: 100 });
    const big = counter(1000);
    expect((await cache.get('big', big.load)).value).toBe('value-1');
    expect((await cache.get('big', big.load)).state).toBe('MISS');
    expect(big.calls).toBe(2);
  });

  test('the entry bound evicts too', async () => {
    const { cache } = setup({ maxEntries: 2 });
    const loaders = [counter(), counter(), counter()];
    for (const [i, l] of loaders.entries()) await cache.get(`k${i}`, l.load);
    expect((await cache.get('k0', loaders[0]!.load)).state).toBe('MISS');
    expect((await cache.get('k2', loaders[2]!.load)).state).toBe('HIT');
  });

  test('delete forgets one key or every key with a prefix', async () => {
    const { cache } = setup();
    const l = counter();
    await cache.get('h1|a', l.load);
    await cache.get('h1|b', l.load);
    await cache.get('h2|a', l.load);
    cache.delete('h1|', true);
    expect((await cache.get('h1|a', l.load)).state).toBe('MISS');
    expect((await cache.get('h1|b', l.load)).state).toBe('MISS');
    expect((await cache.get('h2|a', l.load)).state).toBe('HIT');
    cache.delete('h2|a');
    expect((await cache.get('h2|a', l.load)).state).toBe('MISS');
  });
});

import { expect, test } from '@jest/globals';
import { boundedLru } from '../../src/cache/bounded-lru.js';

test('holds at most its number of entries; the least recently used leaves first', () => {
  const cache = boundedLru<string, number>(3);
  for (const [n, key] of ['a', 'b', 'c'].entries()) cache.set(key, n);
  expect(cache.get('a')).toBe(0); // a is now the most recently used
  cache.set('d', 3);
  expect([...cache.keys()].sort()).toEqual(['a', 'c', 'd']);
  for (let n = 0; n < 1000; n++) cache.set(`k${n}`, n);
  expect(cache.size).toBe(3);
  expect([...cache.keys()]).toEqual(['k999', 'k998', 'k997']);
});

test('options other than the bound pass through (dispose sees what leaves)', () => {
  const left: string[] = [];
  const cache = boundedLru<string, string>(1, { dispose: (_value, key) => void left.push(key) });
  cache.set('a', 'x');
  cache.set('b', 'y');
  expect(left).toEqual(['a']);
});

test('a bound that holds nothing is refused', () => {
  expect(() => boundedLru(0)).toThrow(RangeError);
  expect(() => boundedLru(1.5)).toThrow(RangeError);
});

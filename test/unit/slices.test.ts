import { expect, test } from '@jest/globals';
import { inSlices, nextLimit } from '../../src/db/slices.js';

/** Bulk deletes in slices (src/db/slices.ts): sized from how long the last one took, stopped between two. */

test('a slice that ran long halves the next, one that ran short grows it by half, within 50 to 5,000 rows', () => {
  expect(nextLimit(500, 100, 20)).toBe(250);
  expect(nextLimit(500, 20, 20)).toBe(500);
  expect(nextLimit(500, 5, 20)).toBe(750);
  expect(nextLimit(60, 100, 20)).toBe(50);
  expect(nextLimit(4_000, 1, 20)).toBe(5_000);
  // PostgreSQL's slices aim longer: 50 ms is short there.
  expect(nextLimit(500, 50, 200)).toBe(750);
});

test('slices run until one reports no more, with a turn of the event loop between two', async () => {
  const limits: number[] = [];
  let turns = 0;
  let counting = true;
  const turn = () => {
    turns += 1;
    if (counting) setImmediate(turn);
  };
  setImmediate(turn);
  const result = await inSlices('sqlite', async (limit) => {
    limits.push(limit);
    return { rows: limit, more: limits.length < 4 };
  });
  counting = false;
  expect(limits).toHaveLength(4);
  expect(limits[0]).toBe(500);
  expect(limits[1]).toBeGreaterThan(500);
  expect(result).toEqual({ rows: limits.reduce((a, b) => a + b, 0), stopped: false });
  expect(turns).toBeGreaterThanOrEqual(3);
});

test('an aborted signal stops before the next slice, and says so', async () => {
  const stop = new AbortController();
  let slices = 0;
  const result = await inSlices(
    'postgres',
    async () => {
      slices += 1;
      if (slices === 2) stop.abort();
      return { rows: 10, more: true };
    },
    stop.signal,
  );
  expect(slices).toBe(2);
  expect(result).toEqual({ rows: 20, stopped: true });
});

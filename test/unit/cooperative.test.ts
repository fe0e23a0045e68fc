/** Sorting and mapping big lists in slices, yielding to the event loop between them. */
import { describe, expect, test } from '@jest/globals';
import { mapCooperatively, sortCooperatively } from '../../src/options/cooperative.js';

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

/**
 * Counts the event loop's turns while work runs: an immediate that schedules itself again runs
 * once a turn, so a count above 0 means the work yielded. (A timer would need a millisecond to
 * pass, which fast work on a fast machine may not give it.)
 */
function countTurns(): { count: number; stop(): void } {
  const turns = { count: 0, stop: () => clearImmediate(handle) };
  let handle = setImmediate(function turn() {
    turns.count += 1;
    handle = setImmediate(turn);
  });
  return turns;
}

describe('sortCooperatively', () => {
  test('orders as Array.prototype.sort does, stable on ties, for lists of every size around the slice', async () => {
    for (const n of [0, 1, 1999, 2000, 2001, 4100, 9000]) {
      // Labels repeat, so ties are many; the index says whether their input order was kept.
      const items = Array.from({ length: n }, (_, i) => ({ label: `Screen ${(i * 7919) % 500}`, i }));
      const expected = items.slice().sort((a, b) => collator.compare(a.label, b.label));
      const sorted = await sortCooperatively(items, (a, b) => collator.compare(a.label, b.label));
      expect(sorted).toBe(items);
      expect(sorted.map((x) => x.i)).toEqual(expected.map((x) => x.i));
    }
  });

  test('lets timers run while it sorts 100,000 labels', async () => {
    const items = Array.from({ length: 100_000 }, (_, i) => `Screen ${(i * 7919) % 100_000}`);
    const turns = countTurns();
    try {
      await sortCooperatively(items, (a, b) => collator.compare(a, b));
    } finally {
      turns.stop();
    }
    expect(turns.count).toBeGreaterThan(0);
    // One expectation for the whole order (100,000 of jest's took seconds).
    const outOfOrder = items.findIndex((item, i) => i > 0 && collator.compare(items[i - 1]!, item) > 0);
    expect(outOfOrder).toBe(-1);
  });
});

describe('mapCooperatively', () => {
  test('maps every item in order, yielding between slices', async () => {
    const items = Array.from({ length: 5001 }, (_, i) => i);
    const turns = countTurns();
    const doubled = await mapCooperatively(items, (i) => i * 2).finally(() => turns.stop());
    expect(doubled).toEqual(items.map((i) => i * 2));
    expect(turns.count).toBeGreaterThan(0);
  });
});

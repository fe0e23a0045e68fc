/** Sorting and mapping big lists in slices, yielding to the event loop between them. */
import { describe, expect, test } from '@jest/globals';
import { mapCooperatively, sortCooperatively } from '../../src/options/cooperative.js';

const collator = new Intl.Collator('en', { sensitivity: 'base', numeric: true });

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
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 0);
    try {
      await sortCooperatively(items, (a, b) => collator.compare(a, b));
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBeGreaterThan(0);
    for (let i = 1; i < items.length; i++) expect(collator.compare(items[i - 1]!, items[i]!)).toBeLessThanOrEqual(0);
  });
});

describe('mapCooperatively', () => {
  test('maps every item in order, yielding between slices', async () => {
    const items = Array.from({ length: 5001 }, (_, i) => i);
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 0);
    const doubled = await mapCooperatively(items, (i) => i * 2).finally(() => clearInterval(timer));
    expect(doubled).toEqual(items.map((i) => i * 2));
    expect(ticks).toBeGreaterThan(0);
  });
});

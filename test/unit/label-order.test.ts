import { describe, expect, test } from '@jest/globals';
import { labelCollator, labelValueKey, sortKey } from '../../src/text/label-order.js';

/** src/text/label-order.ts: byte-wise order of sort keys is the collator's order (docs/options.md). */

const alphabet = [...' _-,;:!?.\'"()[]{}@*/\\&#%`^+<=>|~$0123456789aAbBzZeEéÉèçÇñÑüÜøæœßłđ’“…\u00a0', 'e\u0301', 'a\u0308', '00', '007', '10', '9'];

/** A small deterministic generator (mulberry32), so a failure repeats. */
function random(seed: number): (n: number) => number {
  let a = seed;
  return (n) => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return Math.floor((((x ^ (x >>> 14)) >>> 0) / 4294967296) * n);
  };
}

const bytewise = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe('sortKey', () => {
  test('orders 50,000 random pairs of covered texts as the collator does', () => {
    const rnd = random(19);
    const text = () => Array.from({ length: rnd(8) }, () => alphabet[rnd(alphabet.length)]).join('');
    const wrong: Array<[string, string]> = [];
    for (let i = 0; i < 50_000; i++) {
      const a = text();
      const b = i % 3 === 0 ? a.slice(0, rnd(a.length + 1)) + text().slice(0, 2) : text();
      const [ka, kb] = [sortKey(a), sortKey(b)];
      if (ka === null || kb === null || bytewise(ka, kb) !== Math.sign(labelCollator.compare(a, b))) wrong.push([a, b]);
    }
    expect(wrong).toEqual([]);
  });

  test('label then value: the in-memory comparison', () => {
    const rnd = random(7);
    const labels = ['Board 2', 'board 10', 'Board 02', 'Café', 'cafe', 'Cafe 1', 'a b', 'ab'];
    const rows = Array.from({ length: 400 }, () => ({ label: labels[rnd(labels.length)]!, value: `dev-${'0'.repeat(rnd(3))}${rnd(20)}` }));
    const memory = [...rows].sort((x, y) => labelCollator.compare(x.label, y.label) || labelCollator.compare(x.value, y.value));
    const keyed = [...rows].sort((x, y) => bytewise(labelValueKey(x.label, x.value)!, labelValueKey(y.label, y.value)!));
    // Rows the collator calls equal on both (dev-1, dev-01) keep their order in both sorts.
    expect(keyed).toEqual(memory);
  });

  test('texts outside the covered characters have no key', () => {
    for (const text of ['Ωmega', 'snow ☃', 'tab\there', '²', '١', 'a\u0363', '\u0301a', '1\u0301', '9'.repeat(61)]) expect(sortKey(text)).toBeNull();
    expect(sortKey('9'.repeat(60))).not.toBeNull();
  });
});

import { describe, expect, test } from '@jest/globals';
import { DummyDriver, Kysely, sql, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { inList, rowGroups, valuesOf } from '../../src/db/in-list.js';

const db = new Kysely<Record<string, never>>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new SqliteIntrospector(k),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});
const compiled = (values: unknown[]) => sql`SELECT id FROM t WHERE id IN ${inList(values)}`.compile(db);

describe('inList: an IN list padded to a few lengths', () => {
  test('pads with the last value up to the next length, so the values are the same set', () => {
    const { sql: text, parameters } = compiled([7, 3, 5]);
    expect(text).toBe('SELECT id FROM t WHERE id IN (?, ?, ?, ?)');
    expect(parameters).toEqual([7, 3, 5, 5]);
    expect(compiled([1]).parameters).toEqual([1]);
    expect(compiled(Array.from({ length: 129 }, (_, i) => i)).parameters).toHaveLength(256);
  });

  test('a batch of any size from 1 to 500 takes one of 10 statement texts', () => {
    const texts = new Set(Array.from({ length: 500 }, (_, i) => compiled(Array.from({ length: i + 1 }, (_, j) => j)).sql));
    expect(texts.size).toBe(10);
  });

  test('an empty list is refused (IN () is not SQL)', () => {
    expect(() => inList([])).toThrow('no values');
  });
});

describe('rowGroups and valuesOf: a multi-row insert in groups of a few sizes', () => {
  test('every row once, in order, in groups of 128, 32, 8 or 1, largest first', () => {
    for (const n of [1, 7, 8, 9, 41, 128, 250, 500, 1000]) {
      const rows = Array.from({ length: n }, (_, i) => i);
      const groups = rowGroups(rows);
      expect(groups.flat()).toEqual(rows);
      const sizes = groups.map((g) => g.length);
      expect(sizes.every((s) => [128, 32, 8, 1].includes(s))).toBe(true);
      expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    }
    expect(rowGroups(Array.from({ length: 250 }, (_, i) => i)).map((g) => g.length)).toEqual([128, 32, 32, 32, 8, 8, 8, 1, 1]);
    expect(rowGroups([])).toEqual([]);
  });

  test('an insert of any batch from 1 to 500 rows takes one of 4 statement texts', () => {
    const texts = new Set<string>();
    for (let n = 1; n <= 500; n += 1)
      for (const group of rowGroups(Array.from({ length: n }, (_, i) => [i, `r${i}`])))
        texts.add(sql`INSERT INTO t (a, b) VALUES ${valuesOf(group)}`.compile(db).sql);
    expect(texts.size).toBe(4);
    const { sql: text, parameters } = sql`INSERT INTO t (a, b) VALUES ${valuesOf([
      [1, 'x'],
      [2, null],
    ])}`.compile(db);
    expect(text).toBe('INSERT INTO t (a, b) VALUES (?, ?), (?, ?)');
    expect(parameters).toEqual([1, 'x', 2, null]);
  });
});

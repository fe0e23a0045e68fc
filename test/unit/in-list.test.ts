import { describe, expect, test } from '@jest/globals';
import { DummyDriver, Kysely, sql, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler } from 'kysely';
import { inList } from '../../src/db/in-list.js';

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

import { expect, test } from '@jest/globals';
import { Kysely, PostgresDialect, sql } from 'kysely';
import type pg from 'pg';
import { prepared, preparedName } from '../../src/db/prepared.js';

// Compiles only (no pool is ever asked for a connection).
const kysely = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: {} as pg.Pool }) });

test('a statement marked prepared is named by its text; one not marked has no name', () => {
  const text = (n: number) => prepared(sql`SELECT ${n} AS n FROM t WHERE a = ${'x'}`).compile(kysely).sql;
  const name = preparedName(text(1));
  // The same text whatever the values (they are parameters), so one prepared statement a text.
  expect(name).toMatch(/^p_[0-9a-f]{40}$/);
  expect(preparedName(text(2))).toBe(name);
  expect(preparedName(prepared(sql`SELECT 2`).compile(kysely).sql)).not.toBe(name);
  expect(preparedName(sql`SELECT ${1} AS n`.compile(kysely).sql)).toBeUndefined();
});

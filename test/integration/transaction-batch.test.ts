import { afterEach, beforeEach, expect, test } from '@jest/globals';
import type { Kysely } from 'kysely';
import type { Db } from '../../src/db/database.js';
import type { Tables } from '../../src/db/tables.js';
import { TransactionBatch } from '../../src/db/transaction-batch.js';
import { openTestDatabase } from '../helpers/engine.js';

/**
 * Group commit (src/db/transaction-batch.ts), on the suite's engine: the units of one turn of
 * the event loop share one transaction, each in a savepoint, so a failing unit is rolled back
 * alone and the others land.
 */
let db: Db;
let drop: () => Promise<void>;
beforeEach(async () => ({ db, drop } = await openTestDatabase()));
afterEach(async () => {
  await db.close();
  await drop();
});

/** The batch over `db`, counting the transactions it opens. */
function counted(): { batch: TransactionBatch; transactions: () => number } {
  let opened = 0;
  const batch = new TransactionBatch({
    transaction: <T>(fn: (trx: Kysely<Tables>) => Promise<T>) => {
      opened += 1;
      return db.transaction(fn);
    },
  });
  return { batch, transactions: () => opened };
}

const probe = (trx: Kysely<Tables>, id: number) =>
  trx
    .insertInto('readiness_probe')
    .values({ id, checked_at: `unit ${id}` })
    .execute();
const ids = async () => (await db.kysely.selectFrom('readiness_probe').select('id').orderBy('id').execute()).map((r) => Number(r.id));

test('the units of one turn are one transaction; a unit that fails is rolled back alone, its caller gets its error', async () => {
  const { batch, transactions } = counted();
  const results = await Promise.allSettled([
    batch.run(async (trx) => (await probe(trx, 1), 'one')),
    batch.run(async (trx) => {
      await probe(trx, 2);
      throw new Error('unit two failed after writing');
    }),
    batch.run(async (trx) => (await probe(trx, 3), 'three')),
    // A statement that fails (on PostgreSQL it would abort the whole transaction without its savepoint).
    batch.run((trx) => probe(trx, 1)),
  ]);
  expect(transactions()).toBe(1);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
  expect((results[0] as PromiseFulfilledResult<string>).value).toBe('one');
  expect(((results[1] as PromiseRejectedResult).reason as Error).message).toBe('unit two failed after writing');
  expect(await ids()).toEqual([1, 3]);
});

test('units handed in while a batch commits go in the next; a lone unit that fails writes nothing', async () => {
  const { batch, transactions } = counted();
  const first = batch.run((trx) => probe(trx, 10));
  await new Promise((resolve) => setImmediate(resolve)); // the first batch has started
  const later = [batch.run((trx) => probe(trx, 11)), batch.run((trx) => probe(trx, 12))];
  await Promise.all([first, ...later]);
  expect(transactions()).toBe(2);
  await expect(
    batch.run(async (trx) => {
      await probe(trx, 13);
      throw new Error('alone');
    }),
  ).rejects.toThrow('alone');
  expect(await ids()).toEqual([10, 11, 12]);
});

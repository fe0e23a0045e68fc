import { expect, test } from '@jest/globals';
import { sql } from 'kysely';
import pg from 'pg';
import { withPgClient } from '../../src/db/pg-client.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { openTestDatabase, postgresUrl, testEngine } from '../helpers/engine.js';

/**
 * Several replicas: a PostgreSQL connection that dies while its client is checked out (between two
 * statements of a transaction) fails that transaction as "database unavailable" and leaves the
 * process running; pg-pool alone would let the client's 'error' event end the process.
 */
const onPostgres = testEngine === 'postgres' ? test : test.skip;

onPostgres('a connection killed inside a transaction fails it as unavailable; the process and the pool carry on', async () => {
  const { db, drop } = await openTestDatabase();
  const admin = new pg.Client({ connectionString: postgresUrl() });
  await admin.connect();
  try {
    const failure = await db
      .transaction(async (trx) => {
        const { rows } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(trx);
        await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]);
        // The client is checked out and idle now: its connection's end arrives as an 'error' event.
        await new Promise((resolve) => setTimeout(resolve, 200));
        await sql`SELECT 1`.execute(trx);
      })
      .then(
        () => null,
        (err: unknown) => err,
      );
    expect(failure).not.toBeNull();
    expect(isDatabaseUnavailable(failure)).toBe(true);
    await expect(db.ping()).resolves.toBeUndefined();
  } finally {
    await admin.end();
    await db.close();
    await drop();
  }
});

onPostgres('a short-lived admin connection ended by the server while idle fails its next query; the process carries on', async () => {
  const failure = await withPgClient(postgresUrl(), async (client) => {
    const { rows } = await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    await withPgClient(postgresUrl(), (admin) => admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid]));
    // Idle now: the end of its connection arrives as an 'error' event (unheard, it would end the process).
    await new Promise((resolve) => setTimeout(resolve, 200));
    await client.query('SELECT 1');
  }).then(
    () => null,
    (err: unknown) => err,
  );
  expect(failure).toBeInstanceOf(Error);
  expect(isDatabaseUnavailable(failure)).toBe(true);
});

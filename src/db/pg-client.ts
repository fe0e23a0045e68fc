import pg from 'pg';

/**
 * Runs `fn` on a short-lived PostgreSQL connection (administration: creating a database,
 * reading the server version; the bench and the tests use it too), and always closes it.
 *
 * A connection the server ends while the client is idle (a shutdown, `pg_terminate_backend`)
 * arrives as an 'error' event on the client, which with no listener ends the whole process;
 * such an error fails the query in progress, or the next one, anyway. Seen: Ctrl+C during
 * `npm run cluster`'s start stopped PostgreSQL under an open client and the CLI crashed with
 * exit code 1 instead of stopping cleanly.
 */
export async function withPgClient<T>(url: string, fn: (client: pg.Client) => Promise<T>, options: { connectionTimeoutMillis?: number } = {}): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: options.connectionTimeoutMillis ?? 10_000 });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { withPgClient } from '../../src/db/pg-client.js';

/**
 * Fresh PostgreSQL databases for tests. The server is the one at `TEST_DATABASE_URL` (any
 * database on it that the role may connect to; the role needs CREATEDB); when that is unset,
 * jest's globalSetup (test/global-setup.ts) starts an embedded PostgreSQL for the run and sets
 * it, so workers find it here.
 */
export interface TestDatabase {
  /** `postgres://…/<name>`: hand it to the connector as DATABASE_URL. */
  url: string;
  name: string;
  /** Terminates the sessions still connected to it and drops it. Idempotent. */
  drop(): Promise<void>;
}

/** True when a PostgreSQL server is configured for this run (set by globalSetup or the caller). */
export function postgresAvailable(): boolean {
  return Boolean(process.env.TEST_DATABASE_URL);
}

function serverUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    throw new Error('TEST_DATABASE_URL is not set: run the tests through jest (its globalSetup starts an embedded PostgreSQL) or point it at a server');
  }
  return url;
}

/** Runs `fn` on a short-lived connection to the server's maintenance database (the URL's own). */
export async function withServer<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  return withPgClient(serverUrl(), fn);
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `t_${process.pid}_${randomBytes(5).toString('hex')}`;
  await withServer((client) => client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`));
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  let dropped: Promise<void> | null = null;
  return {
    url: url.toString(),
    name,
    drop: () =>
      (dropped ??= withServer(async (client) => {
        // FORCE (PostgreSQL 13+) terminates the remaining sessions, a replica's pool included.
        await client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`);
      })),
  };
}

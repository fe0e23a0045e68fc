import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Engine } from '../../src/db/database.js';
import { withPgClient } from '../../src/db/pg-client.js';

/**
 * Where a bench connector stores its data. SQLite: a file (the caller's temp folder).
 * PostgreSQL: a fresh database on the server at BENCH_DATABASE_URL (default: the local server,
 * postgres://postgres@127.0.0.1:5432/postgres), dropped afterwards.
 */
export async function benchDatabaseUrl(engine: Engine, label: string): Promise<{ url?: string; drop(): Promise<void> }> {
  if (engine === 'sqlite') return { drop: async () => undefined };
  const admin = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const name = `bench_${label.replace(/\W/g, '_')}_${randomBytes(4).toString('hex')}`;
  await adminQuery(admin, `CREATE DATABASE ${pg.escapeIdentifier(name)}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => adminQuery(admin, `DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
  };
}

async function adminQuery(url: string, text: string): Promise<void> {
  let connected = false;
  await withPgClient(url, async (client) => {
    connected = true;
    await client.query(text);
  }).catch((err: Error) => {
    throw connected ? err : new Error(`PostgreSQL rows need a server: set BENCH_DATABASE_URL (${err.message})`);
  });
}

/** The engines the storage rows run on: both, unless BENCH_ENGINES names one (`sqlite` or `postgres`). */
export function benchEngines(): Engine[] {
  const named = (process.env.BENCH_ENGINES ?? 'sqlite,postgres').split(',').map((e) => e.trim());
  const engines = named.filter((e): e is Engine => e === 'sqlite' || e === 'postgres');
  if (engines.length === 0 || engines.length !== named.length) throw new Error('BENCH_ENGINES must list sqlite and/or postgres');
  return engines;
}

import BetterSqlite3 from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresDialect, SqliteDialect, sql, type SqliteDatabase, type SqliteStatement } from 'kysely';
import pg from 'pg';
import type { Tables } from './tables.js';
import { migratePostgres, migrateSqlite } from './migrate.js';

export type Engine = 'sqlite' | 'postgres';

/**
 * Everything the connector stores, on either engine. Stores use `kysely` for single
 * statements and `transaction` for several that must land together; nothing above the
 * stores knows which engine runs, except where SQL truly differs (`engine`).
 */
export interface Db {
  readonly engine: Engine;
  readonly kysely: Kysely<Tables>;
  /**
   * Runs `fn` in one transaction on one connection. On SQLite the write lock is taken up
   * front (BEGIN IMMEDIATE), so two processes never both read and then try to write; inside
   * `fn`, use only `trx` (on SQLite the one connection is held until `fn` ends).
   */
  transaction<T>(fn: (trx: Kysely<Tables>) => Promise<T>): Promise<T>;
  /** Throws when the database cannot answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface OpenOptions {
  /** `postgres://…`: PostgreSQL; otherwise SQLite at `path`. */
  url?: string;
  path?: string;
  poolSize?: number;
  /** PostgreSQL: schema to create and use (tests give each app its own). */
  schema?: string;
  /** Errors of idle pooled connections (a restarting server); they never crash the process. */
  onPoolError?: (err: Error) => void;
}

/** Opens the database and applies pending migrations (once, even with replicas starting together). */
export async function openDatabase(options: OpenOptions): Promise<Db> {
  const db = options.url ? await openPostgres(options.url, options) : openSqlite(options.path ?? 'data/connector.db');
  try {
    if (db.engine === 'postgres') await migratePostgres(db.kysely);
    return db;
  } catch (err) {
    await db.close();
    throw err;
  }
}

function openSqlite(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new BetterSqlite3(path);
  raw.pragma('journal_mode = WAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  raw.pragma('synchronous = NORMAL');
  migrateSqlite(raw);
  const kysely = new Kysely<Tables>({ dialect: new SqliteDialect({ database: statementCache(raw) }) });
  return {
    engine: 'sqlite',
    kysely,
    // Kysely's SQLite driver serialises every use of its one connection, so holding it for
    // the transaction is what makes the transaction atomic within this process too.
    transaction: (fn) =>
      kysely.connection().execute(async (conn) => {
        await sql`begin immediate`.execute(conn);
        try {
          const result = await fn(conn);
          await sql`commit`.execute(conn);
          return result;
        } catch (err) {
          if (raw.inTransaction) await sql`rollback`.execute(conn);
          throw err;
        }
      }),
    async ping() {
      raw.prepare('SELECT 1').get();
    },
    close: () => kysely.destroy(),
  };
}

/**
 * Kysely prepares every statement it runs; better-sqlite3 statements are reusable, so keeping
 * the few hundred distinct ones the connector issues saves a compile per query.
 */
function statementCache(raw: BetterSqlite3.Database, max = 500): SqliteDatabase {
  const statements = new Map<string, SqliteStatement>();
  return {
    close: () => raw.close(),
    prepare(text) {
      let statement = statements.get(text);
      if (!statement) {
        statement = raw.prepare(text) as unknown as SqliteStatement;
        if (statements.size >= max) statements.delete(statements.keys().next().value!);
        statements.set(text, statement);
      }
      return statement;
    },
  };
}

async function openPostgres(url: string, options: OpenOptions): Promise<Db> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // A server that is down or unreachable fails requests in two seconds (503) instead of
    // hanging them; /readyz gives the database as long.
    connectionTimeoutMillis: 2000,
    idleTimeoutMillis: 30_000,
    // Epoch milliseconds are BIGINT; they fit a JS number exactly, so read them as numbers.
    types: { getTypeParser: ((oid: number, format?: string) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser },
    ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
  });
  pool.on('error', (err) => options.onPoolError?.(err));
  // pg-pool listens for errors only on idle clients. A connection lost while its client is
  // checked out between two statements (inside a transaction) would emit an unhandled 'error'
  // and end the process; the statement that follows fails and is answered 503 instead.
  pool.on('connect', (client) => {
    client.on('error', (err) => options.onPoolError?.(err));
  });
  if (options.schema) {
    const client = await pool.connect();
    try {
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${pg.escapeIdentifier(options.schema)}`);
    } finally {
      client.release();
    }
  }
  const kysely = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    engine: 'postgres',
    kysely,
    transaction: (fn) => kysely.transaction().execute(fn),
    async ping() {
      await sql`SELECT 1`.execute(kysely);
    },
    close: () => kysely.destroy(),
  };
}

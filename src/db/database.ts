import BetterSqlite3 from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, sql, type Dialect } from 'kysely';
import type { Tables } from './tables.js';
import { migratePostgres, migrateSqlite } from './migrate.js';
import { routedSqliteDialect } from './sqlite-driver.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { budgetedPostgresDialect } from './pg-budget.js';
import type { Engine } from './engine.js';
import { kyselyWithin, type WaitsDriver } from './request-kysely.js';
import type { RequestWaits } from './wait-budget.js';

export type { Engine };

/**
 * Everything the connector stores, on either engine. Stores use `kysely` for single
 * statements and `transaction` for several that must land together. Code above db/ only hands
 * `engine` back to db/ (its dialect helpers, `inSlices`, and `byEngine` where services.ts picks
 * a store per engine): it asks for an operation, never compares engines (docs/architecture.md,
 * "The data layer").
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
  /**
   * Inside `trx`: waits until no other transaction holds the lock called `name`, then holds it
   * to the end of `trx`, so transactions that take the same name run one after another, across
   * replicas (PostgreSQL: an advisory transaction lock). SQLite: nothing to take, its one writer
   * already runs every transaction alone.
   */
  lockKey(trx: Kysely<Tables>, name: string): Promise<void>;
  /**
   * After a bulk write (`rowsWritten` ≥ 1,000) on PostgreSQL: renews the planner's statistics of
   * `tables` now, not when autovacuum next looks (a minute on, or never where it is off), so the
   * next statements walk the indexes instead of sorting whole tables. `executor`: a transaction
   * to run it in. SQLite's planner needs none: a no-op there.
   */
  refreshStatistics(tables: ReadonlyArray<keyof Tables>, rowsWritten: number, executor?: Kysely<Tables>): Promise<void>;
  /**
   * SQLite: copies the write-ahead log into the database and cuts the file back (a TRUNCATE
   * checkpoint on the checkpointer's thread, sqlite-checkpointer.ts), after a bulk delete such
   * as the retention sweep, so its log does not stay hundreds of megabytes; true when the log is
   * within its limit afterwards. PostgreSQL: nothing to do (true).
   */
  truncateLog(): Promise<boolean>;
  /** Throws when the database cannot serve a real read and a write (`/readyz`). */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * The same database as one request uses it: its `kysely` and `transaction` take every
   * connection with the request's waits, so they share the request's one deadline
   * (wait-budget.ts). Without waits (outside a request), the database itself.
   */
  within(waits: RequestWaits | undefined): Db;
}

/** `db` with its request views (`within`), each made once per request, on the driver `dialect` keeps. */
function withRequestViews(db: Omit<Db, 'within'>, dialect: Dialect, transactionOn: (kysely: Kysely<Tables>) => Db['transaction']): Db {
  const driver = dialect.createDriver() as WaitsDriver;
  const views = new WeakMap<RequestWaits, Db>();
  const full: Db = {
    ...db,
    within(waits) {
      if (!waits) return full;
      let view = views.get(waits);
      if (!view) {
        const kysely = kyselyWithin(db.kysely, dialect, driver, waits);
        view = { ...full, kysely, transaction: transactionOn(kysely) };
        views.set(waits, view);
      }
      return view;
    },
  };
  return full;
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
  /**
   * `DATABASE_TIMEOUT_MS` (default 5000): the longest a statement, a lock wait or a wait for a
   * pooled connection may take (SQLite: the busy wait). Past it the statement fails with an
   * error that `isDatabaseUnavailable` recognises, so a request answers 503.
   */
  timeoutMs?: number;
  /** False: open without applying pending migrations (`npm run migrate -- --dry-run`, `npm run backup`). */
  migrate?: boolean;
}

const defaultTimeoutMs = 5_000;

/** Rows a write must touch before PostgreSQL's statistics are renewed (`refreshStatistics`). */
const bulkRows = 1_000;

/** One read and one write, on either engine. */
async function readAndWrite(kysely: Kysely<Tables>): Promise<void> {
  await kysely
    .insertInto('readiness_probe')
    .values({ id: 1, checked_at: new Date().toISOString() })
    .onConflict((oc) => oc.column('id').doUpdateSet({ checked_at: (eb) => eb.ref('excluded.checked_at') }))
    .execute();
  await kysely.selectFrom('readiness_probe').select('checked_at').where('id', '=', 1).executeTakeFirstOrThrow();
}

/** Opens the database and applies pending migrations (once, even with replicas starting together). */
export async function openDatabase(options: OpenOptions): Promise<Db> {
  const migrate = options.migrate !== false;
  const db = options.url
    ? await openPostgres(options.url, options)
    : openSqlite(options.path ?? 'data/connector.db', options.timeoutMs ?? defaultTimeoutMs, migrate);
  try {
    if (db.engine === 'postgres' && migrate) await migratePostgres(db.kysely);
    return db;
  } catch (err) {
    await db.close();
    throw err;
  }
}

function openSqlite(path: string, timeoutMs: number, migrate: boolean): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const raw = new BetterSqlite3(path);
  // At open, nothing else runs yet: the journal switch and the migrations may wait the whole bound.
  raw.pragma(`busy_timeout = ${Math.floor(timeoutMs)}`);
  raw.pragma('journal_mode = WAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('synchronous = NORMAL');
  if (migrate) migrateSqlite(raw);
  // Serving: better-sqlite3 is synchronous, so SQLite's own busy wait would block the event
  // loop, and every other request, for as long as another process holds the write lock. It is
  // kept short; statements wait for the lock asynchronously instead (sqlite-driver.ts), up to `timeoutMs`.
  raw.pragma(`busy_timeout = ${Math.min(sqliteBusySpinMs, Math.floor(timeoutMs))}`);
  const file = path !== ':memory:';
  const checkpointer = file ? startCheckpointer(raw, path) : null;
  const reader = file ? openReader(path, timeoutMs) : null;
  const dialect = routedSqliteDialect(raw, reader, timeoutMs);
  const kysely = new Kysely<Tables>({ dialect });
  // The driver gives the writer to one user at a time; holding it for the transaction is
  // what makes the transaction atomic within this process too.
  const transactionOn =
    (on: Kysely<Tables>): Db['transaction'] =>
    (fn) =>
      on.connection().execute(async (conn) => {
        await sql`begin immediate`.execute(conn);
        try {
          const result = await fn(conn);
          await sql`commit`.execute(conn);
          return result;
        } catch (err) {
          if (raw.inTransaction) await sql`rollback`.execute(conn);
          throw err;
        }
      });
  return withRequestViews(
    {
      engine: 'sqlite',
      kysely,
      transaction: transactionOn(kysely),
      lockKey: async () => undefined,
      refreshStatistics: async () => undefined,
      truncateLog: async () => {
        // The writer may be adding to the log as it is copied: a few tries, a moment apart.
        for (let tries = 1; checkpointer; tries++) {
          if (await checkpointer.truncate()) return true;
          if (tries === 5) return false;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
        return true;
      },
      ping: () => readAndWrite(kysely),
      close: async () => {
        await checkpointer?.stop();
        await kysely.destroy();
        // Kysely closes its driver only if a statement ever ran through it; the connections are
        // closed here in any case (the writer last: it folds the log into the file).
        reader?.close();
        raw.close();
      },
    },
    dialect,
    transactionOn,
  );
}

/** SQLite's own (blocking) busy wait per statement. */
const sqliteBusySpinMs = 50;

/** The second connection, for reads outside a transaction (sqlite-driver.ts); it never writes. */
function openReader(path: string, timeoutMs: number): BetterSqlite3.Database {
  const reader = new BetterSqlite3(path);
  reader.pragma(`busy_timeout = ${Math.min(sqliteBusySpinMs, Math.floor(timeoutMs))}`);
  reader.pragma('query_only = ON');
  return reader;
}

async function openPostgres(url: string, options: OpenOptions): Promise<Db> {
  // Loaded here, not at the top: a process on SQLite (every command-line tool, most starts) skips pg's modules.
  const { default: pg } = await import('pg');
  const timeoutMs = options.timeoutMs ?? defaultTimeoutMs;
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? 10,
    // Every wait is bounded (docs/configuration.md, DATABASE_TIMEOUT_MS): for a connection
    // (a down server, or a pool whose connections are all busy), for a statement, for a lock
    // (a table another connection holds); and, on the client side, for a server that stops
    // answering mid-statement. Each failure is answered 503 with Retry-After.
    connectionTimeoutMillis: timeoutMs,
    statement_timeout: timeoutMs,
    lock_timeout: timeoutMs,
    query_timeout: timeoutMs + 2_000,
    // A transaction left open (a replica frozen mid-transaction) gives its locks back.
    idle_in_transaction_session_timeout: Math.max(6 * timeoutMs, 30_000),
    idleTimeoutMillis: 30_000,
    // Epoch milliseconds are BIGINT; they fit a JS number exactly, so read them as numbers.
    types: {
      getTypeParser: ((oid: number, format?: string) => (oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser,
    },
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
  // A request's waits share one deadline (wait-budget.ts); the pool's own bounds are each wait's outside requests.
  const dialect = budgetedPostgresDialect(pool, timeoutMs);
  const kysely = new Kysely<Tables>({ dialect });
  const transactionOn =
    (on: Kysely<Tables>): Db['transaction'] =>
    (fn) =>
      on.transaction().execute(fn);
  return withRequestViews(
    {
      engine: 'postgres',
      kysely,
      transaction: transactionOn(kysely),
      lockKey: async (trx, name) => {
        await sql`SELECT pg_advisory_xact_lock(hashtext(${name}))`.execute(trx);
      },
      refreshStatistics: async (tables, rowsWritten, executor = kysely) => {
        if (rowsWritten < bulkRows || tables.length === 0) return;
        await sql`ANALYZE ${sql.join(tables.map((table) => sql.table(table)))}`.execute(executor);
      },
      truncateLog: async () => true,
      ping: () => readAndWrite(kysely),
      close: () => kysely.destroy(),
    },
    dialect,
    transactionOn,
  );
}

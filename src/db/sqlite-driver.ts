import type BetterSqlite3 from 'better-sqlite3';
import { CompiledQuery, SqliteDialect, type DatabaseConnection, type QueryResult } from 'kysely';
import { waitBudget, type RequestWaits } from './wait-budget.js';
import { keptDriver, type WaitsDriver } from './request-kysely.js';

/**
 * Kysely's SQLite driver with two connections to one database file:
 *
 * - the writer, held by one user at a time (a transaction holds it until it ends, across its
 *   awaits, which is what makes it atomic within this process); every write and everything
 *   inside a transaction runs on it;
 * - a reader (`query_only`), for reads outside a transaction. In WAL mode a reader sees the
 *   last commit and never waits for the writer, so a request that only reads is not queued
 *   behind a long transaction (a poll writing 100,000 snapshot rows in slices, a fan-out).
 *
 * A statement goes to the reader when it is outside a transaction and SQLite says it returns
 * rows and writes nothing (`reader && readonly`), whoever built it (an insert, update or delete
 * built by Kysely goes to the writer without asking, so writes never fill the reader's cache); the first statement that
 * is not a read takes the writer for the rest of that connection's use. Writes commit
 * synchronously, so a read that follows a write always sees it. An in-memory database has no
 * second connection: everything runs on the writer.
 *
 * Every statement runs through `patiently`: without blocking the event loop, SQLITE_BUSY
 * (another process holds the write lock) is retried until `timeoutMs`, then thrown (503).
 * Waiting for the writer within this process is bounded by `timeoutMs` as well. Within a
 * request (a connection taken with its waits, request-kysely.ts), both waits get only what is
 * left of the request's deadline (wait-budget.ts): with none left, a lock that is free is still
 * taken, one that is held is not waited for.
 */
export function routedSqliteDialect(writer: BetterSqlite3.Database, reader: BetterSqlite3.Database | null, timeoutMs: number): SqliteDialect {
  const dialect = new SqliteDialect({ database: writer as never });
  keptDriver(dialect, new RoutedDriver(statementCache(writer), reader && statementCache(reader), timeoutMs));
  return dialect;
}

type Prepare = (text: string) => BetterSqlite3.Statement;

class RoutedDriver implements WaitsDriver {
  private readonly writerLock = new Mutex();

  constructor(
    private readonly writer: Prepare & { close(): void },
    private readonly reader: (Prepare & { close(): void }) | null,
    private readonly timeoutMs: number,
  ) {}

  async init(): Promise<void> {}

  async acquireConnection(waits?: RequestWaits): Promise<DatabaseConnection> {
    return new RoutedConnection(this, waits);
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin'));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as RoutedConnection).release();
  }

  async destroy(): Promise<void> {
    this.reader?.close();
    this.writer.close();
  }

  /** The statement on the reader when it is a pure read, else null. */
  readStatement(text: string): BetterSqlite3.Statement | null {
    if (!this.reader) return null;
    let statement: BetterSqlite3.Statement;
    try {
      statement = this.reader(text);
    } catch {
      return null; // the writer will prepare it, and report its error
    }
    return statement.reader && statement.readonly ? statement : null;
  }

  run(
    prepare: 'reader' | 'writer',
    text: string,
    parameters: readonly unknown[],
    waits: RequestWaits | undefined,
    prepared?: BetterSqlite3.Statement,
  ): Promise<QueryResult<unknown>> {
    return patiently(() => execute(prepared ?? (prepare === 'reader' ? this.reader! : this.writer)(text), parameters), waitBudget(this.timeoutMs, waits));
  }

  /** Within a request, the wait gets what is left of its deadline (wait-budget.ts); elsewhere the full bound. */
  lockWriter(waits: RequestWaits | undefined): Promise<void> {
    return this.writerLock.lock(waitBudget(this.timeoutMs, waits), this.timeoutMs);
  }

  unlockWriter(): void {
    this.writerLock.unlock();
  }
}

class RoutedConnection implements DatabaseConnection {
  private holdsWriter = false;

  constructor(
    private readonly driver: RoutedDriver,
    /** The request this connection was taken for, if any. */
    private readonly waits: RequestWaits | undefined,
  ) {}

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.holdsWriter) {
      // Only a select (or raw SQL, which may be one) is worth preparing on the reader to ask.
      const kind = query.query.kind;
      const read = kind === 'SelectQueryNode' || kind === 'RawNode' ? this.driver.readStatement(query.sql) : null;
      if (read) return (await this.driver.run('reader', query.sql, query.parameters, this.waits, read)) as QueryResult<R>;
      await this.driver.lockWriter(this.waits);
      this.holdsWriter = true;
    }
    return (await this.driver.run('writer', query.sql, query.parameters, this.waits)) as QueryResult<R>;
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not used on SQLite');
  }

  release(): void {
    if (!this.holdsWriter) return;
    this.holdsWriter = false;
    this.driver.unlockWriter();
  }
}

/** One statement, the way Kysely's own SQLite connection runs it. */
async function execute(statement: BetterSqlite3.Statement, parameters: readonly unknown[]): Promise<QueryResult<unknown>> {
  if (statement.reader) return { rows: statement.all(parameters) };
  const { changes, lastInsertRowid } = statement.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}

/**
 * Runs one statement, retrying it without blocking while another process holds the write
 * lock (SQLITE_BUSY), until `timeoutMs` has passed; then the last SQLITE_BUSY is thrown, which
 * a request answers with 503. A statement that failed busy did nothing, so it is safe to repeat.
 */
async function patiently<T>(run: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (let pauseMs = 5; ; pauseMs = Math.min(pauseMs * 2, 100)) {
    try {
      return await run();
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() + pauseMs > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  }
}

/**
 * Kysely prepares every statement it runs; better-sqlite3 statements are reusable, so keeping
 * the few hundred distinct ones the connector issues saves a compile per query.
 */
function statementCache(raw: BetterSqlite3.Database, max = 500): Prepare & { close(): void } {
  const statements = new Map<string, BetterSqlite3.Statement>();
  const prepare = (text: string) => {
    let statement = statements.get(text);
    if (!statement) {
      statement = raw.prepare(text);
      if (statements.size >= max) statements.delete(statements.keys().next().value!);
      statements.set(text, statement);
    }
    return statement;
  };
  return Object.assign(prepare, { close: () => raw.close() });
}

/**
 * One holder at a time, in the order they asked. A wait is bounded: past `timeoutMs` the
 * waiter leaves the queue with SQLITE_BUSY, as a statement kept waiting by another process
 * does, so a request answers 503 rather than queue behind a long transaction without end.
 */
class Mutex {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  /** `waitMs`: how long this waiter may wait; `timeoutMs`: DATABASE_TIMEOUT_MS, for the message. */
  lock(waitMs: number, timeoutMs: number): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    if (waitMs <= 0) return Promise.reject(writerBusy(timeoutMs));
    return new Promise((resolve, reject) => {
      const grant = () => {
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        const at = this.waiters.indexOf(grant);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(writerBusy(timeoutMs));
      }, waitMs);
      this.waiters.push(grant);
    });
  }

  unlock(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

function writerBusy(timeoutMs: number): Error {
  return Object.assign(new Error(`database is busy: the write lock was not free within ${timeoutMs} ms (DATABASE_TIMEOUT_MS)`), { code: 'SQLITE_BUSY' });
}

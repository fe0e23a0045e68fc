import { sql, type Kysely } from 'kysely';
import type { Db } from './database.js';
import type { Tables } from './tables.js';
import { byEngine } from './engine.js';

/** One unit of work waiting for the next batch. */
interface Unit {
  work: (trx: Kysely<Tables>) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Units written by one transaction, at most. */
const defaultMaxUnits = 64;

/**
 * Group commit: units of work handed in during one turn of the event loop (and while the
 * batch before them commits) are written by one transaction, each inside a savepoint of its
 * own. A unit that fails is rolled back alone and its caller gets its error; the others land
 * together, and each caller's promise resolves once they are committed. A failed commit fails
 * every unit of the batch, none of which then landed.
 *
 * The poller's records use it (event-log.ts): in a mass outage a replica records a hundred
 * polls a second, and each was a transaction of its own, whose commit wrote the same hot index
 * pages again (on SQLite commits were the largest share of the statements' time, 1.8 ms each
 * under load; on PostgreSQL each is a round trip and a flush of the log).
 */
export class TransactionBatch {
  private waiting: Unit[] = [];
  private running: Promise<void> | null = null;

  constructor(
    private readonly db: Pick<Db, 'transaction'>,
    private readonly maxUnits = defaultMaxUnits,
  ) {}

  /**
   * The poller's batch on `db`'s engine. SQLite: group commit (its one writer runs every
   * transaction alone anyway). PostgreSQL: none (null): a transaction a record, as many at once
   * as the pool allows: one batch at a time made each record wait for the others' round trips, and the
   * many-accounts line polled 75 keys a second instead of 100 (docs/benchmarks.md).
   */
  static forPolls(db: Pick<Db, 'transaction' | 'engine'>): TransactionBatch | null {
    return byEngine<TransactionBatch | null>(db.engine, { sqlite: () => new TransactionBatch(db), postgres: () => null });
  }

  /**
   * Runs `work` in the next batch's transaction; resolves with its result once that commits.
   * Always in a savepoint when the batch holds others: on PostgreSQL a statement that fails
   * aborts the whole transaction, whose commit then rolls back without an error.
   */
  run<T>(work: (trx: Kysely<Tables>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ work, resolve: resolve as (value: unknown) => void, reject });
      // The first unit of a turn starts the writing, after the turn: the others of that turn join it.
      this.running ??= new Promise<void>((started) => setImmediate(started)).then(() => this.writeAll());
    });
  }

  /** Writes batches until nothing waits. */
  private async writeAll(): Promise<void> {
    try {
      while (this.waiting.length > 0) await this.write(this.waiting.splice(0, this.maxUnits));
    } finally {
      this.running = null;
    }
  }

  private async write(units: Unit[]): Promise<void> {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; err: unknown }> = [];
    try {
      await this.db.transaction(async (trx) => {
        for (const unit of units) {
          if (units.length === 1) {
            // Alone: no savepoint needed; its failure rolls the transaction back.
            outcomes.push({ ok: true, value: await unit.work(trx) });
            continue;
          }
          await sql`savepoint unit`.execute(trx);
          try {
            const value = await unit.work(trx);
            await sql`release savepoint unit`.execute(trx);
            outcomes.push({ ok: true, value });
          } catch (err) {
            await sql`rollback to savepoint unit`.execute(trx);
            await sql`release savepoint unit`.execute(trx);
            outcomes.push({ ok: false, err });
          }
        }
      });
    } catch (err) {
      // Nothing landed: every unit not already failed gets the transaction's error.
      units.forEach((unit, i) => {
        const outcome = outcomes[i];
        unit.reject(outcome && !outcome.ok ? outcome.err : err);
      });
      return;
    }
    units.forEach((unit, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.err);
    });
  }
}

import type pg from 'pg';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import { deadlinePassed, waitBudget } from './wait-budget.js';

/**
 * The pg pool as Kysely gets it, with each wait of a request bounded by what is left of the
 * request's deadline (wait-budget.ts) rather than by a full DATABASE_TIMEOUT_MS of its own:
 *
 * - a wait for a pooled connection gives up when the budget runs out;
 * - a statement runs with `statement_timeout` and `lock_timeout` lowered to the budget, set on
 *   its connection just before it (one more round trip, only once the request has already
 *   spent part of its budget) and reset when the connection goes back to the pool;
 * - with no budget left, a statement is not sent at all.
 *
 * The session's own settings (DATABASE_TIMEOUT_MS) stay the bound of every wait outside a
 * request. `commit` and `rollback` are never held back: a transaction always ends.
 */
export function budgetedPool(pool: pg.Pool, timeoutMs: number): PostgresPool {
  const clients = new WeakMap<pg.PoolClient, BudgetedClient>();
  return {
    async connect() {
      const budget = waitBudget(timeoutMs);
      const client = budget >= timeoutMs - slackMs(timeoutMs) ? await pool.connect() : await connectWithin(pool, budget);
      let wrapped = clients.get(client);
      if (!wrapped) clients.set(client, (wrapped = new BudgetedClient(client, timeoutMs)));
      return wrapped;
    },
    end: () => pool.end(),
  };
}

/** A budget this close to the full bound is left to the session's own settings (no extra round trip). */
function slackMs(timeoutMs: number): number {
  return Math.min(250, timeoutMs / 10);
}

/** pg-pool's own message for a wait that ran out, which `isDatabaseUnavailable` knows. */
function connectTimeout(): Error {
  return new Error("timeout exceeded when trying to connect (the request's DATABASE_TIMEOUT_MS passed)");
}

async function connectWithin(pool: pg.Pool, budget: number): Promise<pg.PoolClient> {
  if (budget <= 0) throw connectTimeout();
  const pending = pool.connect();
  let timer: NodeJS.Timeout | undefined;
  let late = false;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      late = true;
      reject(connectTimeout());
    }, budget);
  });
  // A connection that arrives after the request gave up goes straight back to the pool.
  void pending.then(
    (client) => late && client.release(),
    () => undefined,
  );
  try {
    return await Promise.race([pending, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const endsTransaction = /^\s*(commit|rollback)\b/i;

class BudgetedClient implements PostgresPoolClient {
  /** The statement and lock timeout set on the session (ms), or null for its defaults. */
  private lowered: number | null = null;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly timeoutMs: number,
  ) {}

  // Statements only: streaming (a cursor) is not configured for the connector's Kysely.
  readonly query = (async (text: string, parameters: readonly unknown[]) => {
    if (!endsTransaction.test(text)) await this.bound();
    return this.client.query(text, parameters as unknown[]);
  }) as unknown as PostgresPoolClient['query'];

  /** Lowers the session's timeouts to what is left of the request's budget, when that is less than the full bound. */
  private async bound(): Promise<void> {
    const budget = waitBudget(this.timeoutMs);
    if (budget >= this.timeoutMs - slackMs(this.timeoutMs)) return;
    if (budget < 1) throw deadlinePassed(this.timeoutMs);
    const ms = Math.floor(budget);
    await this.client.query(`SET statement_timeout = ${ms}; SET lock_timeout = ${ms}`);
    this.lowered = ms;
  }

  release(): void {
    if (this.lowered === null) return this.client.release();
    this.lowered = null;
    // Back to the session's defaults before another user gets the connection; one that cannot
    // be reset is closed instead.
    this.client.query('RESET statement_timeout; RESET lock_timeout').then(
      () => this.client.release(),
      (err: Error) => this.client.release(err),
    );
  }
}

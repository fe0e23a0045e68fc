import type pg from 'pg';
import { PostgresDialect, PostgresDriver, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { deadlinePassed, waitBudget, type RequestWaits } from './wait-budget.js';
import { keptDriver, type WaitsDriver } from './request-kysely.js';
import { preparedName } from './prepared.js';

/**
 * Kysely's PostgreSQL dialect on `pool`, whose connections can be taken for a request
 * (request-kysely.ts): each of their waits is then bounded by what is left of the request's
 * deadline (wait-budget.ts) rather than by a full DATABASE_TIMEOUT_MS of its own:
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
export function budgetedPostgresDialect(pool: pg.Pool, timeoutMs: number): PostgresDialect {
  const budgeted = budgetedPool(pool, timeoutMs);
  const dialect = new PostgresDialect({ pool: budgeted });
  keptDriver(dialect, new BudgetedDriver(budgeted));
  return dialect;
}

interface BudgetedPool extends PostgresPool {
  /** The waits of the connection being taken; read by `connect` as it starts. */
  next: RequestWaits | undefined;
}

/** Kysely's driver, taking a connection for a request when asked (`acquireConnection(waits)`). */
class BudgetedDriver extends PostgresDriver implements WaitsDriver {
  constructor(private readonly budgeted: BudgetedPool) {
    super({ pool: budgeted });
  }

  override acquireConnection(waits?: RequestWaits) {
    // Kysely's driver calls `connect` synchronously, before its first await: `next` reaches it
    // and no other caller's.
    this.budgeted.next = waits;
    try {
      return super.acquireConnection();
    } finally {
      this.budgeted.next = undefined;
    }
  }
}

function budgetedPool(pool: pg.Pool, timeoutMs: number): BudgetedPool {
  const clients = new WeakMap<pg.PoolClient, BudgetedClient>();
  const budgeted: BudgetedPool = {
    next: undefined,
    async connect() {
      const waits = budgeted.next;
      const budget = waitBudget(timeoutMs, waits);
      const client = budget >= timeoutMs - slackMs(timeoutMs) ? await pool.connect() : await connectWithin(pool, budget);
      let wrapped = clients.get(client);
      if (!wrapped) clients.set(client, (wrapped = new BudgetedClient(client, timeoutMs)));
      wrapped.waits = waits;
      return wrapped;
    },
    end: () => pool.end(),
  };
  return budgeted;
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
  /** The request the connection is checked out for, if any. */
  waits: RequestWaits | undefined;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly timeoutMs: number,
  ) {}

  // Statements only: streaming (a cursor) is not configured for the connector's Kysely. A
  // statement marked `prepared` goes by its name (pg parses it once per connection).
  readonly query = (async (text: string, parameters: readonly unknown[]) => {
    if (!endsTransaction.test(text)) await this.bound();
    const name = preparedName(text);
    const values = parameters as unknown[];
    return name ? this.client.query({ name, text, values }) : this.client.query(text, values);
  }) as unknown as PostgresPoolClient['query'];

  /** Lowers the session's timeouts to what is left of the request's budget, when that is less than the full bound. */
  private async bound(): Promise<void> {
    const budget = waitBudget(this.timeoutMs, this.waits);
    if (budget >= this.timeoutMs - slackMs(this.timeoutMs)) return;
    if (budget < 1) throw deadlinePassed(this.timeoutMs);
    const ms = Math.floor(budget);
    await this.client.query(`SET statement_timeout = ${ms}; SET lock_timeout = ${ms}`);
    this.lowered = ms;
  }

  release(): void {
    this.waits = undefined;
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

/**
 * One deadline for all the database waits of one request (docs/configuration.md,
 * DATABASE_TIMEOUT_MS): it is set by the request's first wait, DATABASE_TIMEOUT_MS later, and
 * every later wait of the request (a pooled connection, a statement, a lock, SQLite's write
 * lock) gets only what is left of it. Past it the wait fails as the database being
 * unavailable, and the request answers 503 with Retry-After: with every table locked, a
 * request that would wait on three of them answers after DATABASE_TIMEOUT_MS, not three times it.
 *
 * The request's share is carried explicitly: the router makes one `RequestWaits` per request
 * and the request's database work runs on `db.within(waits)` (database.ts), whose connections
 * take their bounds from it. No async context is tracked for this: on Node.js 20 an
 * AsyncLocalStorage turns on promise hooks for every promise of the process.
 *
 * Work outside a request (the poller, the deliverer, the retention sweep), work shared by
 * several requests (a rate-limit reservation, a cached load), and what a request leaves
 * running after its answer, bound each wait on their own, as before.
 */
export interface RequestWaits {
  /** performance.now() at which the request's waits must end; null until its first wait. */
  deadline: number | null;
  /** True once the request has been answered (its later waits are bounded on their own). */
  answered(): boolean;
}

/** A request's share of the deadline; `answered` tells when the request no longer waits for its answer. */
export function requestWaits(answered: () => boolean): RequestWaits {
  return { deadline: null, answered };
}

/**
 * How long the next wait may take, in ms: `timeoutMs` outside a request; within one, what is
 * left of its deadline (0 or less: none left), the deadline being set now if this is its first wait.
 */
export function waitBudget(timeoutMs: number, waits: RequestWaits | undefined): number {
  if (!waits || waits.answered()) return timeoutMs;
  const now = performance.now();
  waits.deadline ??= now + timeoutMs;
  return Math.min(timeoutMs, waits.deadline - now);
}

/**
 * Runs `work` for a request without spending the request's deadline on it: work that bounds
 * its own waits (a request's baseline poll of its key, which is the poller's, however long the
 * key's listing). The deadline moves on by as long as `work` took, so the request's own waits
 * before and after it still share DATABASE_TIMEOUT_MS; without this, a baseline of 100,000
 * devices that took 5 s left nothing for the read that answers the request (a 503).
 */
export async function outsideDeadline<T>(waits: RequestWaits | undefined, work: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    if (waits && waits.deadline !== null) waits.deadline += performance.now() - started;
  }
}

/** The error a wait fails with when its request's deadline has passed: unavailable (503), as any bound that fires. */
export function deadlinePassed(timeoutMs: number): Error {
  return Object.assign(new Error(`the request's database waits passed DATABASE_TIMEOUT_MS (${timeoutMs} ms)`), { code: '57014' });
}

const waitsKey = Symbol('database waits');

interface Answerable {
  readonly writableEnded: boolean;
  readonly destroyed: boolean;
  [waitsKey]?: RequestWaits;
}

/**
 * The waits of one HTTP request, kept on its response (a property, not a WeakMap entry: this
 * runs on every request) and made at their first use; answered once the response has ended or
 * its connection closed.
 */
export function waitsOf(res: Answerable): RequestWaits {
  return (res[waitsKey] ??= requestWaits(() => res.writableEnded || res.destroyed));
}

/**
 * PostgreSQL's `deadlock_detected` (40P01): the server failed this transaction to break a cycle
 * of lock waits, and the others in the cycle went on. Nothing of the failed transaction was
 * kept, so running it again is safe. SQLite never raises it (its one writer runs every
 * transaction alone).
 */
export function isDeadlock(err: unknown): boolean {
  // Not `instanceof Error`: a native driver's errors may come from another realm (jest's VM).
  if (typeof err !== 'object' || err === null) return false;
  if ((err as { code?: unknown }).code === '40P01') return true;
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err && isDeadlock(cause);
}

/**
 * Runs `fn` (one statement, or one whole transaction) again when it failed as a deadlock's
 * victim, up to `attempts` runs in all: an operator's delete or pause answers what it did, not
 * a 500, when it met a transaction that locks the same rows in another order
 * (docs/webhooks.md, "Durability"). Any other error, or the last deadlock, is thrown.
 */
export async function retryDeadlocks<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let run = 1; ; run += 1) {
    try {
      return await fn();
    } catch (err) {
      if (run >= attempts || !isDeadlock(err)) throw err;
    }
  }
}

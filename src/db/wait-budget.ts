import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * One deadline for all the database waits of one request (docs/configuration.md,
 * DATABASE_TIMEOUT_MS): it is set by the request's first wait, DATABASE_TIMEOUT_MS later, and
 * every later wait of the request (a pooled connection, a statement, a lock, SQLite's write
 * lock) gets only what is left of it. Past it the wait fails as the database being
 * unavailable, and the request answers 503 with Retry-After: with every table locked, a
 * request that would wait on three of them answers after DATABASE_TIMEOUT_MS, not three times it.
 *
 * Work outside a request (the poller, the deliverer, the retention sweep), and what a request
 * leaves running after its answer, bounds each wait on its own, as before.
 */
interface RequestWaits {
  /** performance.now() at which the request's waits must end; null until its first wait. */
  deadline: number | null;
  /** False once the request has been answered. */
  open: boolean;
}

const requests = new AsyncLocalStorage<RequestWaits>();

/** A request's share of the deadline, to run each of its steps in (`inRequestWaits`). */
export function requestWaits(): RequestWaits {
  return { deadline: null, open: true };
}

/** Runs `fn` (and what it awaits) as part of the request that `waits` belongs to. */
export function inRequestWaits<T>(waits: RequestWaits, fn: () => T): T {
  return requests.run(waits, fn);
}

/** The request has been answered: what it left running bounds each wait on its own. */
export function endRequestWaits(waits: RequestWaits): void {
  waits.open = false;
}

/** Runs `fn` outside any request's deadline: work a request waits for but that is not its own (a poll). */
export function outsideRequestWaits<T>(fn: () => T): T {
  return requests.exit(fn);
}

/**
 * How long the next wait may take, in ms: `timeoutMs` outside a request; within one, what is
 * left of its deadline (0 or less: none left), the deadline being set now if this is its first wait.
 */
export function waitBudget(timeoutMs: number): number {
  const waits = requests.getStore();
  if (!waits?.open) return timeoutMs;
  const now = performance.now();
  waits.deadline ??= now + timeoutMs;
  return Math.min(timeoutMs, waits.deadline - now);
}

/** The error a wait fails with when its request's deadline has passed: unavailable (503), as any bound that fires. */
export function deadlinePassed(timeoutMs: number): Error {
  return Object.assign(new Error(`the request's database waits passed DATABASE_TIMEOUT_MS (${timeoutMs} ms)`), { code: '57014' });
}

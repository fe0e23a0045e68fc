/** Node's codes for a connection that could not be made or was lost. */
const networkCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);
/** SQLite result codes that mean the file cannot be used right now (locked, I/O, gone). */
const sqliteCodes = /^SQLITE_(BUSY|LOCKED|IOERR|CANTOPEN|FULL|READONLY|PROTOCOL)/;
/** pg and pg-pool messages for a lost or unobtainable connection (they carry no code). */
const lostConnection =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection ended|not queryable|is not currently accepting connections|Query read timeout/i;
/**
 * A bound of DATABASE_TIMEOUT_MS that fired: statement_timeout (57014, query_canceled) and
 * lock_timeout (55P03, lock_not_available).
 */
const boundedWait = new Set(['57014', '55P03']);

/**
 * Whether an error means the database cannot be reached or used right now, as opposed to a
 * bug or bad data: PostgreSQL's connection-exception class (08…), an administrator's or
 * crash shutdown or start-up in progress (57P01–57P03), too many connections (53300), a
 * refused, reset or timed-out socket, or SQLite busy or failing on I/O. Such errors answer
 * 503 `Database unavailable` and make background work back off (README, "Running several replicas"). So do the
 * bounds of DATABASE_TIMEOUT_MS: a statement or lock wait that ran out, a pool with no free connection.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  // Not `instanceof Error`: a native driver's errors may come from another realm (jest's VM).
  if (typeof err !== 'object' || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === 'string') {
    if (/^08/.test(code) || /^57P0[123]$/.test(code) || code === '53300' || boundedWait.has(code)) return true;
    if (networkCodes.has(code) || sqliteCodes.test(code)) return true;
  }
  if (typeof message === 'string' && lostConnection.test(message)) return true;
  const cause = (err as { cause?: unknown }).cause;
  return cause !== undefined && cause !== err && isDatabaseUnavailable(cause);
}

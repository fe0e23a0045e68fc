/**
 * One-line start-up failures that say which variable to change (docs/configuration.md: "one clear line
 * naming the variable"). `run()` prints the message of a StartupError as it is, with no stack.
 */
export class StartupError extends Error {}

/** Why the server could not listen, naming PORT or HOST. */
export function listenFailure(err: NodeJS.ErrnoException, host: string, port: number): string {
  switch (err.code) {
    case 'EADDRINUSE':
      return `Port ${port} is already in use; set PORT to another port (or 0 for any free port)`;
    case 'EACCES':
      return `Port ${port} needs privileges this process does not have; set PORT to a port above 1023 (or 0 for any free port)`;
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `HOST ${host} is not an address of this machine; set HOST to one of its addresses (or 0.0.0.0 for all of them)`;
    default:
      return `Cannot listen on ${host}:${port}: ${err.message}`;
  }
}

/**
 * Why the database file could not be opened, naming the path and DATABASE_PATH. File-system and
 * SQLite errors (they carry a `code`: EACCES, SQLITE_CANTOPEN, SQLITE_NOTADB …) get the hint to
 * choose another path; others (a schema newer than this build) are about the file's content.
 */
export function databaseFailure(path: string, err: Error): StartupError {
  const { code, path: blocked } = err as NodeJS.ErrnoException;
  // Creating the folder hit a file on the way (mkdir says EEXIST or ENOTDIR, naming neither clearly).
  const reason = (code === 'EEXIST' || code === 'ENOTDIR') && blocked ? `${blocked} is a file, not a folder` : err.message;
  const hint = code ? '; set DATABASE_PATH to a file this process can create and write' : '';
  return new StartupError(`Cannot open the database ${path} (DATABASE_PATH): ${reason}${hint}`);
}

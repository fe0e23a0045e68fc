import { ConfigError, loadConfig, type Config } from '../config.js';
import { openDatabase, type Db } from '../db/database.js';
import { DotEnvError, loadDotEnv } from '../env-file.js';
import { databaseOptions } from '../db/database-options.js';
import { fail } from './fail.js';

// Shared with main.ts, which sits below the command-line tools: it lives in db/.
export { databaseOptions };
export { fail };

/** Config (environment, then .env) and database for a command-line tool; a bad configuration exits with its one line. */
export async function cliContext(): Promise<{ config: Config; db: Db }> {
  const config = cliConfig();
  return { config, db: await openDatabase(databaseOptions(config)) };
}

/** The configuration a command-line tool runs with; a bad configuration exits with its one line. */
export function cliConfig(): Config {
  try {
    // The same .env as the server, so `npm run import` writes to the database the server reads.
    loadDotEnv();
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError || err instanceof DotEnvError) fail(err.message);
    throw err;
  }
}

import { ConfigError, loadConfig, type Config } from '../config.js';
import { openDatabase, type Db } from '../db/database.js';

/** Config and database for a command-line tool; a bad configuration exits with its one line. */
export function cliContext(): { config: Config; db: Db } {
  try {
    const config = loadConfig();
    return { config, db: openDatabase(config.DATABASE_PATH) };
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message);
    throw err;
  }
}

export function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

import BetterSqlite3 from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { openDatabase } from '../db/database.js';
import { describeMigration, pendingVersions, schemaVersion } from '../db/migrate.js';
import { cliConfig, databaseOptions, fail } from './context.js';

const usage = 'Usage: npm run migrate [-- --dry-run]';

/**
 * `npm run migrate`: applies the pending schema migrations (the server applies them at start too;
 * docs/deploy.md, "Upgrades"). `--dry-run` prints one line per pending migration, or
 * `No pending migrations`, and changes nothing: SQLite is opened read-only (a missing file is not
 * created), PostgreSQL is only read.
 */
async function run(): Promise<void> {
  let dryRun = false;
  try {
    const parsed = parseArgs({ options: { 'dry-run': { type: 'boolean', default: false } } });
    dryRun = parsed.values['dry-run'] ?? false;
  } catch (err) {
    fail(`${(err as Error).message}\n${usage}`);
  }
  const config = cliConfig();
  const engine = config.DATABASE_URL ? 'postgres' : 'sqlite';
  const where = config.DATABASE_URL ? 'PostgreSQL (DATABASE_URL)' : config.DATABASE_PATH;
  const before = await currentVersion(config);
  let pending: number[];
  try {
    pending = pendingVersions(before);
  } catch (err) {
    fail(`${(err as Error).message}: upgrade the connector before migrating ${where}`);
  }
  const lines = (verb: string) => pending.map((version) => `${verb} migration ${version}: ${describeMigration(version, engine)}`);
  if (pending.length === 0) {
    console.log(`No pending migrations (${where} is at schema version ${before}).`);
    return;
  }
  if (dryRun) {
    for (const line of lines('pending')) console.log(line);
    return;
  }
  const db = await openDatabase(databaseOptions(config));
  const after = await schemaVersion(db.kysely, db.engine);
  await db.close();
  for (const line of lines('applied')) console.log(line);
  console.log(`${where} is at schema version ${after}.`);
}

/** The database's schema version, read without changing anything (a missing SQLite file is version 0). */
async function currentVersion(config: ReturnType<typeof cliConfig>): Promise<number> {
  if (!config.DATABASE_URL) {
    if (config.DATABASE_PATH === ':memory:' || !existsSync(config.DATABASE_PATH)) return 0;
    const raw = new BetterSqlite3(config.DATABASE_PATH, { readonly: true, fileMustExist: true });
    try {
      return raw.pragma('user_version', { simple: true }) as number;
    } finally {
      raw.close();
    }
  }
  const db = await openDatabase({ ...databaseOptions(config), migrate: false });
  try {
    return await schemaVersion(db.kysely, db.engine);
  } finally {
    await db.close();
  }
}

await run();

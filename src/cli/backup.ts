import BetterSqlite3 from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { cliConfig, fail } from './context.js';

const usage = 'Usage: npm run backup -- <file>';

/**
 * `npm run backup -- <file>` (docs/deploy.md, "Backups"): an online copy of the SQLite database
 * with SQLite's backup API, while the server serves and writes. All pages are copied in one step,
 * that is within one read transaction: the copy is the database as of one commit, and in WAL mode
 * the server's writes go on meanwhile (a backup copied a slice at a time would start over at
 * every write made between two slices, and might never end on a busy server). On PostgreSQL it
 * says to use pg_dump instead, and copies nothing.
 */
async function run(): Promise<void> {
  let positionals: string[] = [];
  try {
    positionals = parseArgs({ allowPositionals: true }).positionals;
  } catch (err) {
    fail(`${(err as Error).message}\n${usage}`);
  }
  const [file, ...extra] = positionals;
  if (!file || extra.length > 0) fail(usage);
  const config = cliConfig();
  if (config.DATABASE_URL) {
    fail(
      [
        "DATABASE_URL is set: the data is in PostgreSQL, which this command does not copy. Use PostgreSQL's own tool, e.g.",
        `  pg_dump --format=custom --file=${file} "$DATABASE_URL"`,
        'and pg_restore to restore it (docs/deploy.md, "Backups"). Nothing was written.',
      ].join('\n'),
    );
  }
  const source = config.DATABASE_PATH;
  if (source === ':memory:' || !existsSync(source)) fail(`No database at ${source} (DATABASE_PATH): nothing to back up.`);
  if (existsSync(file)) fail(`${file} already exists: give a new file name (a backup never overwrites).`);
  const db = new BetterSqlite3(source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    // The first step only counts the pages; the second copies all of them (0x7fffffff is the most one step takes).
    const result = await db.backup(file, { progress: () => 0x7fffffff });
    const copy = new BetterSqlite3(file, { readonly: true });
    try {
      const check = copy.pragma('quick_check', { simple: true });
      const version = copy.pragma('user_version', { simple: true });
      if (check !== 'ok') fail(`The copy at ${file} failed SQLite's quick_check: ${String(check)}`);
      const mb = (statSync(file).size / 1_048_576).toFixed(1);
      console.log(`Backed up ${source} to ${file}: ${result.totalPages} pages (${mb} MB), schema version ${String(version)}, quick_check ok.`);
    } finally {
      copy.close();
    }
  } finally {
    db.close();
  }
}

await run();

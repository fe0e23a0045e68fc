/**
 * SQLite's write-ahead log is copied into the database by a thread of its own
 * (src/db/sqlite-checkpointer.ts), never inside a commit of the serving connection: a
 * transaction that wrote thousands of pages (a mass outage) commits without first copying
 * them all, which held the event loop 100 ms and more.
 */
import { afterEach, describe, expect, test } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from 'kysely';
import { existsSync, mkdtempSync, readdirSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDatabase, type Db } from '../../src/db/database.js';
import { startCheckpointer } from '../../src/db/sqlite-checkpointer.js';
import { testEngine } from '../helpers/engine.js';

const onSqlite = testEngine === 'sqlite' ? test : test.skip;
const dirs: string[] = [];
const dbs: Db[] = [];
afterEach(async () => {
  for (const db of dbs.splice(0)) await db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'connector-checkpoints-'));
  dirs.push(dir);
  return dir;
}

/** About `mb` megabytes of rows in one transaction. */
const rows = (mb: number) => Array.from({ length: mb * 256 }, (_, i) => ({ id: 1000 + i, checked_at: 'x'.repeat(3900) }));

const size = (file: string) => statSync(file).size;

async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) if (check()) return true;
  return check();
}

describe('SQLite checkpoints', () => {
  onSqlite(
    'a big commit leaves the copying to the checkpointer: the commit copies nothing, where SQLite by default copies it all inside the commit',
    async () => {
      // Sizes, not durations: a commit that checkpoints has grown the database file by the time
      // it returns (the copy is synchronous, inside it); one that does not has left the data in
      // the log. The checkpointer's thread is stopped first, so nothing copies in between.
      const open = (path: string) => {
        const connection = new BetterSqlite3(path);
        connection.pragma('journal_mode = WAL');
        connection.pragma('synchronous = NORMAL');
        connection.exec('CREATE TABLE readiness_probe (id INTEGER PRIMARY KEY, checked_at TEXT NOT NULL)');
        return connection;
      };
      const bigCommit = (connection: BetterSqlite3.Database) => {
        const insert = connection.prepare('INSERT INTO readiness_probe (id, checked_at) VALUES (?, ?)');
        connection.exec('BEGIN');
        for (const r of rows(32)) insert.run(r.id, r.checked_at);
        connection.exec('COMMIT');
      };
      const mb = 1024 * 1024;

      // The old way, side by side: SQLite's default, checkpointing in the commit.
      const oldPath = join(folder(), 'old.db');
      const old = open(oldPath);
      const oldBefore = size(oldPath);
      bigCommit(old);
      expect(size(oldPath) - oldBefore).toBeGreaterThan(30 * mb);
      old.close();

      // The serving connection as openDatabase sets it up beside its checkpointer.
      const path = join(folder(), 'connector.db');
      const writer = open(path);
      await startCheckpointer(writer, path).stop();
      const before = size(path);
      bigCommit(writer);
      expect(size(path) - before).toBeLessThan(mb);
      expect(size(`${path}-wal`)).toBeGreaterThan(30 * mb);
      writer.close();
    },
  );

  onSqlite('the checkpointer copies the log into the database as it grows, and the data reads back', async () => {
    const path = join(folder(), 'connector.db');
    const db = await openDatabase({ path });
    dbs.push(db);
    const before = size(path);
    await db.transaction(async (trx) => {
      for (let i = 0, all = rows(16); i < all.length; i += 500)
        await trx
          .insertInto('readiness_probe')
          .values(all.slice(i, i + 500))
          .execute();
    });
    // Within a few looks of the checkpointer, the database file holds the 16 MB.
    expect(await until(() => size(path) > before + 15 * 1024 * 1024, 5000)).toBe(true);
    const counted = await sql<{ n: number }>`SELECT count(*) AS n FROM readiness_probe`.execute(db.kysely);
    expect(Number(counted.rows[0]!.n)).toBe(16 * 256);
  });

  onSqlite("close lets go of the file: every connection closed (the checkpointer thread's too), the log folded in, also when no statement ran", async () => {
    const openFiles = (dir: string) =>
      readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return readlinkSync(`/proc/self/fd/${fd}`).startsWith(dir);
        } catch {
          return false;
        }
      }).length;
    for (const runStatement of [false, true]) {
      const dir = folder();
      const path = join(dir, 'connector.db');
      const db = await openDatabase({ path });
      if (runStatement) await db.transaction((trx) => trx.insertInto('readiness_probe').values(rows(1)).execute());
      await db.close();
      expect([runStatement, openFiles(dir), existsSync(`${path}-wal`)]).toEqual([runStatement, 0, false]);
      // Nothing holds a lock: another connection may change the journal mode at once.
      const other = new BetterSqlite3(path);
      other.pragma('busy_timeout = 0');
      expect(other.pragma('journal_mode = DELETE', { simple: true })).toBe('delete');
      other.close();
    }
  });
});

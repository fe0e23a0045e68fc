import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

/** The write-ahead log is copied into the database once it holds this many pages (SQLite's own default). */
const checkpointPages = 1000;
/** How often the checkpointer looks at the log's size. */
const lookEveryMs = 250;
/** A log reset after a burst is cut back to this size, so a mass outage does not keep a big file. */
const walSizeLimitBytes = 64 * 1024 * 1024;

/**
 * The checkpointer's thread, as plain JavaScript (it runs as given, in tests too). It opens its
 * own connection to the file and copies the log into the database whenever the log has grown
 * past its threshold: a PASSIVE checkpoint, which waits for no reader or writer and is tried
 * again at the next look if it could not finish.
 */
const workerSource = `
const { workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.module);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
const threshold = db.pragma('page_size', { simple: true }) * workerData.pages;
setInterval(() => {
  let size = 0;
  try { size = statSync(workerData.path + '-wal').size; } catch { return; }
  if (size < threshold) return;
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or gone: the next look tries again */ }
}, workerData.everyMs);
`;

/**
 * Checkpoints of a SQLite file in WAL mode, off the event loop. SQLite checkpoints on the
 * connection that commits, inside the commit: a transaction that wrote thousands of pages (a
 * mass outage's events and deliveries) made its commit copy them all into the database first,
 * 100 ms and more during which no request was served. Here the serving connections never
 * checkpoint (`wal_autocheckpoint = 0`); a worker thread with a connection of its own does, as
 * the log grows (docs/architecture.md, the data layer). Should the thread fail, the writer
 * checkpoints by itself again, as SQLite does by default.
 */
export function startCheckpointer(writer: BetterSqlite3.Database, path: string): { stop(): Promise<void> } {
  writer.pragma('wal_autocheckpoint = 0');
  writer.pragma(`journal_size_limit = ${walSizeLimitBytes}`);
  const fallBack = () => {
    if (writer.open) writer.pragma(`wal_autocheckpoint = ${checkpointPages}`);
  };
  let worker: Worker;
  try {
    const module = createRequire(import.meta.url).resolve('better-sqlite3');
    worker = new Worker(workerSource, { eval: true, workerData: { module, path, pages: checkpointPages, everyMs: lookEveryMs } });
  } catch {
    fallBack();
    return { stop: async () => undefined };
  }
  worker.unref();
  let stopping = false;
  worker.once('error', fallBack);
  worker.once('exit', () => {
    if (!stopping) fallBack();
  });
  return {
    async stop() {
      stopping = true;
      await worker.terminate();
    },
  };
}

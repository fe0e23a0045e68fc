import { statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';

/** The write-ahead log is copied into the database once it holds this many pages (SQLite's own default). */
const checkpointPages = 1000;
/** How often the checkpointer looks at the log's size. */
const lookEveryMs = 250;
/** A log reset after a burst is cut back to this size, so a mass outage does not keep a big file. */
export const walSizeLimitBytes = 64 * 1024 * 1024;
/**
 * How long a TRUNCATE checkpoint waits for the writer and readers to let go. It blocks new
 * writes while it waits (they wait asynchronously, sqlite-driver.ts), so it is kept short and
 * tried again rather than made long.
 */
const truncateWaitMs = 200;
/** How long stop() lets the thread close its connection before it is terminated. */
const stopWaitMs = 2000;

/**
 * The checkpointer's thread, as plain JavaScript (it runs as given, in tests too). It opens its
 * own connection to the file and copies the log into the database whenever the log has grown
 * past its threshold: a PASSIVE checkpoint, which waits for no reader or writer and is tried
 * again at the next look if it could not finish.
 */
const workerSource = `
const { workerData, parentPort } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.module);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
const threshold = db.pragma('page_size', { simple: true }) * workerData.pages;
const walSize = () => { try { return statSync(workerData.path + '-wal').size; } catch { return 0; } };
/* Copies the log (PASSIVE: never blocks the writer); once all of it is copied, cuts the file to
   nothing (TRUNCATE, which then has nothing left to copy: it blocks writes only for a moment). */
const copy = () => {
  try { const [r] = db.pragma('wal_checkpoint(PASSIVE)'); return r.busy === 0 && r.log === r.checkpointed; } catch { return false; }
};
const truncate = () => {
  if (!copy()) return false;
  try {
    db.pragma('busy_timeout = ' + workerData.truncateWaitMs);
    return db.pragma('wal_checkpoint(TRUNCATE)')[0].busy === 0;
  } catch { return false; } finally { db.pragma('busy_timeout = 0'); }
};
/* Started because the log has reached the threshold: a first copy at once. */
if (walSize() >= threshold) copy();
const looking = setInterval(() => {
  /* busy or gone: the next look tries again */
  if (walSize() >= threshold) copy();
}, workerData.everyMs);
parentPort.on('message', (id) => {
  if (id === 'stop') {
    /* Its connection closed before the thread ends, so the file is let go of when stop() returns. */
    clearInterval(looking);
    db.close();
    parentPort.close();
    return;
  }
  parentPort.postMessage({ id, truncated: truncate(), size: walSize() });
});
`;

/**
 * Checkpoints of a SQLite file in WAL mode, off the event loop. SQLite checkpoints on the
 * connection that commits, inside the commit: a transaction that wrote thousands of pages (a
 * mass outage's events and deliveries) made its commit copy them all into the database first,
 * 100 ms and more during which no request was served. Here the serving connections never
 * checkpoint (`wal_autocheckpoint = 0`); a worker thread with a connection of its own does, as
 * the log grows (docs/architecture.md, the data layer). Should the thread fail, the writer
 * checkpoints by itself again, as SQLite does by default.
 *
 * `truncate` asks for a TRUNCATE checkpoint on the same thread (after a bulk delete: the
 * retention sweep): the log copied whole, then the file cut to nothing, and says whether the log
 * is back within its limit. Cutting a file of hundreds of megabytes takes a few hundred
 * milliseconds during which writes wait (asynchronously, up to DATABASE_TIMEOUT_MS), so it is
 * asked for only after such a bulk delete.
 */
export function startCheckpointer(writer: BetterSqlite3.Database, path: string): Checkpointer {
  writer.pragma('wal_autocheckpoint = 0');
  writer.pragma(`journal_size_limit = ${walSizeLimitBytes}`);
  const threshold = (writer.pragma('page_size', { simple: true }) as number) * checkpointPages;
  const fallBack = () => {
    if (writer.open) writer.pragma(`wal_autocheckpoint = ${checkpointPages}`);
  };
  const walSize = () => {
    try {
      return statSync(`${path}-wal`).size;
    } catch {
      return 0;
    }
  };
  let stopping = false;
  const asked = new Map<number, (withinLimit: boolean) => void>();
  let nextId = 0;
  const answerAll = () => {
    for (const resolve of asked.values()) resolve(false);
    asked.clear();
  };

  // The thread (about 50 ms to start, with its own copy of the driver) is started the first
  // time it is needed: when the log first reaches the threshold, or a truncate is asked for.
  // Until then this thread only looks at the log's size; a database that stays small (a test's,
  // a quiet replica's) never starts one.
  let thread: { worker: Worker; exited: boolean } | null = null;
  let failed = false;
  const started = (): { worker: Worker; exited: boolean } | null => {
    if (thread || failed || stopping) return thread;
    let worker: Worker;
    try {
      const module = createRequire(import.meta.url).resolve('better-sqlite3');
      worker = new Worker(workerSource, { eval: true, workerData: { module, path, pages: checkpointPages, everyMs: lookEveryMs, truncateWaitMs } });
    } catch {
      failed = true;
      fallBack();
      return null;
    }
    const current = { worker, exited: false };
    thread = current;
    worker.unref();
    worker.once('error', fallBack);
    worker.once('exit', () => {
      current.exited = true;
      if (!stopping) fallBack();
      answerAll();
    });
    worker.on('message', (answer: { id: number; size: number }) => {
      asked.get(answer.id)?.(answer.size <= walSizeLimitBytes);
      asked.delete(answer.id);
    });
    return current;
  };
  const looking = setInterval(() => {
    if (walSize() < threshold) return;
    clearInterval(looking);
    started();
  }, lookEveryMs);
  looking.unref();

  return {
    async stop() {
      stopping = true;
      clearInterval(looking);
      // The thread closes its connection and ends (terminating it would leave its connection
      // open until garbage collection: a lock on the file, and the log not folded in at close).
      if (thread && !thread.exited) {
        const { worker } = thread;
        const ended = new Promise((resolve) => worker.once('exit', resolve));
        worker.postMessage('stop');
        const stuck = setTimeout(() => void worker.terminate(), stopWaitMs);
        await ended;
        clearTimeout(stuck);
      }
      answerAll();
    },
    truncate() {
      const current = started();
      if (!current || current.exited) return Promise.resolve(false);
      const id = nextId++;
      return new Promise((resolve) => {
        asked.set(id, resolve);
        current.worker.postMessage(id);
      });
    },
  };
}

export interface Checkpointer {
  stop(): Promise<void>;
  /** A TRUNCATE checkpoint now, on the checkpointer's thread; true when the log is then within its limit. */
  truncate(): Promise<boolean>;
}

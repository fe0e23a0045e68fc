import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig } from '../../src/config.js';
import { importDataset } from '../../src/dataset/import.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { buildServices, type Services } from '../../src/services.js';
import { systemClock } from '../../src/time/timestamps.js';
import { BenchLog } from './stack.js';

/**
 * A connector as main.ts builds it, minus the HTTP listener: loadConfig over `env` (defaults,
 * LOG_LEVEL info), a SQLite *file* in a fresh temp folder (WAL, as in production, so database
 * growth is real bytes on disk), a fixed CONNECTOR_SECRET (nothing written beside the
 * database), `buildServices` with the system clock, logging at `info` to a temp file.
 * Background work is not started. `close()` stops it and removes the folder and log.
 */
export interface BenchConnector {
  services: Services;
  db: Db;
  databasePath: string;
  close(): Promise<void>;
}

export function openConnector(options: { label: string; env?: Record<string, string>; dataset?: unknown }): BenchConnector {
  const dir = mkdtempSync(join(tmpdir(), `connector-bench-${options.label}-`));
  const databasePath = join(dir, 'connector.db');
  const log = new BenchLog(options.label);
  const config = loadConfig({
    LOG_LEVEL: 'info',
    DATABASE_PATH: databasePath,
    CONNECTOR_SECRET: randomBytes(32).toString('hex'),
    ...options.env,
  });
  const db = openDatabase(databasePath);
  if (options.dataset) importDataset(db, options.dataset, { nowMs: systemClock.now() });
  const services = buildServices({ config, logger: log.logger(config.LOG_LEVEL), clock: systemClock, db });
  return {
    services,
    db,
    databasePath,
    async close() {
      try {
        await services.close();
        db.close();
      } finally {
        log.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** Database size as SQLite sees it (WAL content included) and, when compiled in, per-table bytes from `dbstat`. */
export function databaseSize(db: Db, tables: readonly string[]): { bytes: number; pages: number; pageSize: number; tables: Record<string, number> | null } {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  let perTable: Record<string, number> | null = {};
  try {
    const sizeOf = db.prepare('SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name = ?').pluck();
    for (const table of tables) perTable[table] = sizeOf.get(table) as number;
  } catch {
    perTable = null; // dbstat not compiled in
  }
  return { bytes: pages * pageSize, pages, pageSize, tables: perTable };
}

/**
 * A full garbage collection. The child is forked with `--expose-gc` in NODE_OPTIONS; should a
 * Node version refuse that there, the flag is set at run time and `gc` taken from a fresh
 * context (as jest's leak detector does). Returns how it was obtained.
 */
let gcFn: (() => void) | null = null;
let gcSource = '';
export function fullGc(): string {
  if (!gcFn) {
    const global = (globalThis as { gc?: () => void }).gc;
    if (typeof global === 'function') {
      gcFn = global;
      gcSource = '--expose-gc';
    } else {
      setFlagsFromString('--expose-gc');
      gcFn = runInNewContext('gc') as () => void;
      gcSource = 'v8.setFlagsFromString(--expose-gc)';
    }
  }
  gcFn();
  gcFn();
  return gcSource;
}

export interface HeapFigures {
  heapUsed: number;
  heapTotal: number;
  rss: number;
  external: number;
  gc: string;
}

/** heapUsed etc. after two full collections. */
export function settledHeap(): HeapFigures {
  const gc = fullGc();
  const m = process.memoryUsage();
  return { heapUsed: m.heapUsed, heapTotal: m.heapTotal, rss: m.rss, external: m.external, gc };
}

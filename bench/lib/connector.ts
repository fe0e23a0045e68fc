import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { loadConfig } from '../../src/config.js';
import { importDataset } from '../../src/dataset/import.js';
import { sql } from 'kysely';
import { openDatabase, type Db, type Engine } from '../../src/db/database.js';
import { benchDatabaseUrl } from './bench-database.js';
import { buildServices, type Services } from '../../src/services.js';
import { systemClock } from '../../src/time/timestamps.js';
import { BenchLog } from './stack.js';

/**
 * A connector as main.ts builds it, minus the HTTP listener: loadConfig over `env` (defaults,
 * LOG_LEVEL info), a SQLite *file* in a fresh temp folder (WAL, as in production, so database
 * growth is real bytes on disk) or a fresh PostgreSQL database (`engine`), a fixed CONNECTOR_SECRET (nothing written beside the
 * database), `buildServices` with the system clock, logging at `info` to a temp file.
 * Background work is not started. `close()` stops it and removes the folder and log.
 */
export interface BenchConnector {
  services: Services;
  db: Db;
  databasePath: string;
  close(): Promise<void>;
}

export async function openConnector(options: { label: string; env?: Record<string, string>; dataset?: unknown; engine?: Engine }): Promise<BenchConnector> {
  const dir = mkdtempSync(join(tmpdir(), `connector-bench-${options.label}-`));
  const databasePath = join(dir, 'connector.db');
  const log = new BenchLog(options.label);
  const config = loadConfig({
    LOG_LEVEL: 'info',
    DATABASE_PATH: databasePath,
    CONNECTOR_SECRET: randomBytes(32).toString('hex'),
    ...options.env,
  });
  const store = await benchDatabaseUrl(options.engine ?? 'sqlite', options.label);
  const db = await openDatabase({ path: databasePath, url: store.url });
  if (options.dataset) await importDataset(db, options.dataset, { nowMs: systemClock.now() });
  const services = buildServices({ config, logger: log.logger(config.LOG_LEVEL), clock: systemClock, db });
  return {
    services,
    db,
    databasePath,
    async close() {
      try {
        await services.close();
        await db.close();
        await store.drop();
      } finally {
        log.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Database size: SQLite as it sees itself (pages, WAL content included) and, when compiled in,
 * per-table bytes from `dbstat`; PostgreSQL from `pg_database_size` and
 * `pg_total_relation_size` (indexes and TOAST included).
 */
export async function databaseSize(db: Db, tables: readonly string[]): Promise<{ bytes: number; tables: Record<string, number> | null }> {
  if (db.engine === 'postgres') {
    const total = await sql<{ bytes: number }>`SELECT pg_database_size(current_database())::bigint AS bytes`.execute(db.kysely);
    const perTable: Record<string, number> = {};
    for (const table of tables) {
      const row = await sql<{ bytes: number }>`SELECT pg_total_relation_size(${table}::regclass)::bigint AS bytes`.execute(db.kysely);
      perTable[table] = Number(row.rows[0]!.bytes);
    }
    return { bytes: Number(total.rows[0]!.bytes), tables: perTable };
  }
  const pragma = async (name: string) => Number(Object.values((await sql.raw(`PRAGMA ${name}`).execute(db.kysely)).rows[0] as object)[0]);
  const bytes = (await pragma('page_size')) * (await pragma('page_count'));
  let perTable: Record<string, number> | null = {};
  try {
    for (const table of tables) {
      const row = await sql<{ bytes: number }>`SELECT coalesce(sum(pgsize), 0) AS bytes FROM dbstat WHERE name = ${table}`.execute(db.kysely);
      perTable[table] = Number(row.rows[0]!.bytes);
    }
  } catch {
    perTable = null; // dbstat not compiled in
  }
  return { bytes, tables: perTable };
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

/** Rows in a table. */
export async function count(db: Db, table: 'device_snapshots' | 'events' | 'deliveries'): Promise<number> {
  const row = await db.kysely
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Rows of a table per value of a column. */
export async function countBy(db: Db, table: 'events' | 'deliveries', column: 'type' | 'status'): Promise<Record<string, number>> {
  const rows = await sql<{ k: string; n: number }>`SELECT ${sql.ref(column)} AS k, count(*) AS n FROM ${sql.table(table)} GROUP BY ${sql.ref(column)}`.execute(
    db.kysely,
  );
  return Object.fromEntries(rows.rows.map((r) => [r.k, Number(r.n)]));
}

import type { Express } from 'express';
import { loadConfig, type Config } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { importDataset } from '../../src/dataset/import.js';
import { createLogger } from '../../src/logger.js';
import { loadManifest } from '../../src/manifest/load.js';
import type { Manifest } from '../../src/manifest/schema.js';
import { buildServices, type Services } from '../../src/services.js';
import type { ServiceDeps } from '../../src/service-types.js';
import { createApp } from '../../src/app.js';
import type { Clock } from '../../src/time/timestamps.js';
import { openTestDatabase, rawQuery } from './engine.js';
import { closeWhenTestEnds } from './test-scope.js';

/** A clock the test moves by hand. */
export class ManualClock implements Clock {
  constructor(public ms = Date.parse('2026-06-01T12:00:00.000Z')) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface TestApp {
  app: Express;
  services: Services;
  db: Db;
  clock: ManualClock;
  config: Config;
  /** Raw SQL with `?` placeholders: all rows. */
  all<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T[]>;
  /** Raw SQL: the first row, or undefined. */
  one<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T | undefined>;
  /** Raw SQL: the first column of the first row, or undefined. */
  value<T = unknown>(text: string, ...params: unknown[]): Promise<T | undefined>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment overrides, as strings, like the real process gets them. */
  env?: Record<string, string>;
  /** A dataset document imported before the app is built. */
  dataset?: unknown;
  clock?: ManualClock;
  /** SQLite: the database file; PostgreSQL: names the schema, so a rebuilt app finds the same data. */
  databasePath?: string;
  /** PostgreSQL: keep the schema at close (a test that rebuilds the app onto the same data). */
  keep?: boolean;
  /** Collects the app's log lines (JSON) at LOG_LEVEL, instead of discarding them. */
  logLines?: string[];
  /** Whether the poller is behind, as the deliverer sees it (ServiceDeps.pollPressure). */
  pollPressure?: ServiceDeps['pollPressure'];
}

/** Raw-SQL helpers over a database (tests inspect and set up state with them). */
export function sqlHelpers(db: Db): Pick<TestApp, 'all' | 'one' | 'value'> {
  const all = <T>(text: string, ...params: unknown[]) => rawQuery<T>(db, text, ...params);
  return {
    all,
    one: async <T>(text: string, ...params: unknown[]) => (await all<T>(text, ...params))[0],
    value: async <T>(text: string, ...params: unknown[]) => {
      const row = (await all<Record<string, unknown>>(text, ...params))[0];
      return row === undefined ? undefined : (Object.values(row)[0] as T);
    },
  };
}

/**
 * The connector's manifest (manifests/connector.json), read and validated once per test file
 * rather than by each of its apps (about 7 ms of CPU each). Nothing changes a loaded manifest.
 */
let manifest: Manifest | undefined;

/** Builds the real app on a private database of the suite's engine, with an injected clock. */
export async function buildTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_PATH: options.databasePath ?? ':memory:', ...options.env });
  const clock = options.clock ?? new ManualClock();
  const { db, drop } = await openTestDatabase(options.databasePath, {
    timeoutMs: config.DATABASE_TIMEOUT_MS,
    poolSize: options.env?.DATABASE_POOL_SIZE ? config.DATABASE_POOL_SIZE : undefined,
  });
  if (options.dataset) await importDataset(db, options.dataset, { nowMs: clock.now() });
  const lines = options.logLines;
  const logger = lines ? createLogger(config.LOG_LEVEL, { write: (line: string) => void lines.push(line) }) : createLogger(config.LOG_LEVEL);
  manifest ??= loadManifest();
  const services = buildServices({ config, logger, clock, db, manifest, pollPressure: options.pollPressure });
  let closed: Promise<void> | undefined;
  const testApp: TestApp = {
    app: createApp(services),
    services,
    db,
    clock,
    config,
    ...sqlHelpers(db),
    // Once: a test may close its app itself, and the test scope closes it again.
    close: () =>
      (closed ??= (async () => {
        await services.close();
        await db.close();
        if (!options.keep) await drop();
      })()),
  };
  closeWhenTestEnds(testApp);
  return testApp;
}

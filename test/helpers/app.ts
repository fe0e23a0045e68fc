import type { Express } from 'express';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { importDataset } from '../../src/dataset/import.js';
import { createLogger } from '../../src/logger.js';
import { buildServices, type Services } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import type { Clock } from '../../src/time/timestamps.js';

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
  close(): Promise<void>;
}

export interface TestAppOptions {
  /** Environment overrides, as strings, like the real process gets them. */
  env?: Record<string, string>;
  /** A dataset document imported before the app is built. */
  dataset?: unknown;
  clock?: ManualClock;
  databasePath?: string;
}

/** Builds the real app on an in-memory database with an injected clock. */
export function buildTestApp(options: TestAppOptions = {}): TestApp {
  const databasePath = options.databasePath ?? ':memory:';
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_PATH: databasePath, ...options.env });
  const clock = options.clock ?? new ManualClock();
  const db = openDatabase(databasePath);
  if (options.dataset) importDataset(db, options.dataset, { nowMs: clock.now() });
  const services = buildServices({ config, logger: createLogger(config.LOG_LEVEL), clock, db });
  return {
    app: createApp(services),
    services,
    db,
    clock,
    config,
    async close() {
      await services.close();
      db.close();
    },
  };
}

import { afterEach, beforeEach } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Db } from '../../src/db/database.js';
import { catalog } from '../fixtures/catalog.js';
import { buildTestApp, ManualClock, type TestApp } from './app.js';
import { openTestDatabase } from './engine.js';

/**
 * For each test: the app on a database of its own (the catalog, a manual clock, private hook
 * targets allowed) and a second connection to the same database, as another replica would
 * have; both closed and the database dropped after the test. Read `app` and `other` inside tests.
 */
export function appWithSecondConnection(prefix: string): { readonly app: TestApp; readonly other: Db } {
  const state = {} as { app: TestApp; other: Db };
  let cleanups: Array<() => Promise<void> | void> = [];
  beforeEach(async () => {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
    const databasePath = join(dir, 'connector.db');
    state.app = await buildTestApp({ dataset: catalog(), databasePath, keep: true, clock: new ManualClock(), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    const second = await openTestDatabase(databasePath);
    state.other = second.db;
    cleanups = [() => state.app.close(), () => second.db.close(), () => second.drop(), () => rmSync(dir, { recursive: true, force: true })];
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  return state;
}

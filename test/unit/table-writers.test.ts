import { expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * One writer per table (docs/architecture.md, "Invariants"): the modules that insert, update or
 * delete rows of each connector table, through kysely or in raw SQL, are exactly those the
 * architecture document names. A new writer is a design change: move the write into the
 * owner (its `hookWrites` / `watchWrites` take a transaction) or update the document and this
 * list together. Schema migrations (src/db/migrations.ts, src/db/migrate.ts) are left out.
 */
const srcDir = join(projectRoot, 'src');

const writers: Record<string, string[]> = {
  hooks: ['webhooks/hook-store.ts'],
  watches: ['triggers/postgres-watch-queue.ts', 'triggers/sqlite-watch-queue.ts', 'triggers/watch-queue.ts', 'triggers/watches.ts'],
  events: ['triggers/event-log.ts'],
  device_snapshots: ['triggers/snapshots.ts'],
  deliveries: [
    'webhooks/attempt-log.ts',
    'webhooks/fan-out.ts',
    'webhooks/postgres-delivery-store.ts',
    'webhooks/redelivery.ts',
    'webhooks/sqlite-delivery-store.ts',
  ],
  delivery_attempts: ['webhooks/attempt-log.ts', 'webhooks/postgres-delivery-store.ts', 'webhooks/redelivery.ts', 'webhooks/sqlite-delivery-store.ts'],
  api_keys: ['auth/key-store.ts'],
  rate_limits: ['auth/rate-limit-store.ts'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return /-app$/.test(entry.name) ? [] : sourceFiles(path);
    return /\.ts$/.test(entry.name) ? [path] : [];
  });
}

function writersOf(table: string): string[] {
  const builder = new RegExp(`(?:updateTable|insertInto|deleteFrom)\\(\\s*'${table}(?: as \\w+)?'`);
  const raw = new RegExp(`\\b(?:UPDATE|INSERT INTO|DELETE FROM)\\s+${table}\\b`);
  return sourceFiles(srcDir)
    .map((file) => relative(srcDir, file))
    .filter((file) => !/^db\/migrat/.test(file))
    .filter((file) => {
      const text = readFileSync(join(srcDir, file), 'utf8');
      return builder.test(text) || raw.test(text);
    })
    .sort();
}

test.each(Object.keys(writers))('%s is written only by its owner', (table) => {
  expect(writersOf(table)).toEqual(writers[table]);
});

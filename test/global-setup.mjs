// Once per jest run: without TEST_DATABASE_URL, start an embedded PostgreSQL (data in a temp
// folder, a free port, fsync off) and publish its URL as TEST_DATABASE_URL, which the workers
// inherit (test/helpers/postgres.ts reads it). global-teardown.mjs stops it; the handle travels
// on globalThis (same process). Plain JavaScript: jest loads this file without a build.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../scripts/embedded-postgres.mjs';

export const handleKey = '__connectorEmbeddedPostgres';

export default async function globalSetup() {
  if (process.env.TEST_DATABASE_URL) return;
  const dir = mkdtempSync(join(tmpdir(), 'connector-test-pg-'));
  // Run as root, the server runs as the `postgres` user, which must reach its data folder.
  chmodSync(dir, 0o755);
  const server = await startEmbeddedPostgres({ dataDir: join(dir, 'data'), password: randomBytes(12).toString('hex'), durable: false });
  globalThis[handleKey] = { server, dir };
  process.env.TEST_DATABASE_URL = server.url('postgres');
  process.env.TEST_EMBEDDED_POSTGRES_PID = String(server.pid);
}

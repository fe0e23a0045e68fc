/**
 * `/readyz` (docs/service.md): every check runs at once and each is bounded, so the answer
 * comes within its own timeout (2 s) whatever the database and the upstreams do; and it is 503
 * when the database cannot serve a real write, such as SQLite on a full disk.
 */
import { afterEach, describe, expect, test } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import request from 'supertest';
import { buildTestApp } from '../helpers/app.js';
import { testEngine } from '../helpers/engine.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { catalog } from '../fixtures/catalog.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('/readyz answers within its own timeout', () => {
  test('both upstreams hanging: 503 naming each, within about 2 s, though each upstream call may take 5 s', async () => {
    const upstream = await new FakeUpstream(catalog()).start();
    cleanups.push(() => upstream.stop());
    upstream.failAlways({ hang: true });
    const t = await buildTestApp({ env: { DEVICE_API_URL: upstream.baseUrl, MENU_API_URL: upstream.baseUrl, UPSTREAM_TIMEOUT_MS: '5000' } });
    cleanups.push(() => t.close());
    const started = Date.now();
    const res = await request(t.app).get('/readyz').timeout(8000).expect(503);
    const tookMs = Date.now() - started;
    expect(res.body).toEqual({ status: 'not ready', checks: { database: 'ok', device_upstream: 'not answering', menu_upstream: 'not answering' } });
    // Before: the two probes ran one after the other, each up to UPSTREAM_TIMEOUT_MS (10 s);
    // now at once, within readiness's own timeout. Half the old time leaves room for a busy machine.
    expect(tookMs).toBeLessThan(5_000);
  });
});

/** A tmpfs of `size` at a fresh folder; needs root (CI and this project's machines run as root). */
function smallDisk(size: string): string | null {
  if (process.getuid?.() !== 0) return null;
  const dir = mkdtempSync(join(tmpdir(), 'connector-full-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  cleanups.push(() => {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Writes filler files until the filesystem at `dir` has no byte left. */
function fill(dir: string): string[] {
  const files: string[] = [];
  for (const size of [1 << 20, 1 << 16, 1 << 12, 1 << 9, 1]) {
    for (;;) {
      const file = join(dir, `filler-${files.length}`);
      try {
        writeFileSync(file, Buffer.alloc(size));
        files.push(file);
      } catch {
        rmSync(file, { force: true });
        break;
      }
    }
  }
  return files;
}

const onSqlite = testEngine === 'sqlite' ? test : test.skip;

describe('/readyz and a database that cannot write', () => {
  onSqlite('SQLite on a full disk: 503 "unavailable" while reads still work; ready again once there is room', async () => {
    const disk = smallDisk('4m');
    if (!disk) {
      console.warn('skipped: mounting a small tmpfs needs root');
      return;
    }
    const path = join(disk, 'connector.db');
    const t = await buildTestApp({ databasePath: path });
    cleanups.push(() => t.close());
    await request(t.app).get('/readyz').expect(200);
    // An empty write-ahead log, so the next write must grow a file: the disk is then full.
    const other = new BetterSqlite3(path);
    other.pragma('wal_checkpoint(TRUNCATE)');
    other.close();
    const fillers = fill(disk);
    const res = await request(t.app).get('/readyz').timeout(5000).expect(503);
    expect(res.body).toEqual({ status: 'not ready', checks: { database: 'unavailable' } });
    await request(t.app).get('/healthz').expect(200);
    for (const file of fillers) rmSync(file);
    await request(t.app).get('/readyz').expect(200);
  });
});

/**
 * SQLite's two connections (src/db/sqlite-driver.ts): reads outside a transaction go to a
 * read-only connection, so a request that only reads is not queued behind a long transaction
 * of this process; writes and everything in a transaction stay on the one writer.
 */
import { afterEach, describe, expect, test } from '@jest/globals';
import { sql } from 'kysely';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { testEngine } from '../helpers/engine.js';
import { catalog, keys } from '../fixtures/catalog.js';

const onSqlite = testEngine === 'sqlite' ? test : test.skip;

let t: TestApp | undefined;
const holds: Array<() => void> = [];
afterEach(async () => {
  // A failed test must not leave the writer held, or closing the app would wait for ever.
  for (const release of holds.splice(0)) release();
  await t?.close();
  t = undefined;
});

/** Opens a transaction that writes one probe row and then holds the writer until `release`. */
function holdWriter(app: TestApp, checkedAt: string): { written: Promise<void>; release: () => void; done: Promise<void> } {
  let release!: () => void;
  let written!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const wrote = new Promise<void>((resolve) => (written = resolve));
  holds.push(release);
  const done = app.db.transaction(async (trx) => {
    await sql`INSERT INTO readiness_probe (id, checked_at) VALUES (7, ${checkedAt})`.execute(trx);
    // Inside the transaction its own write is visible (it runs on the writer).
    const own = await sql<{ checked_at: string }>`SELECT checked_at FROM readiness_probe WHERE id = 7`.execute(trx);
    expect(own.rows).toEqual([{ checked_at: checkedAt }]);
    written();
    await released;
  });
  return { written: wrote, release, done };
}

describe('SQLite reads beside a long transaction', () => {
  onSqlite('a request that only reads answers while a transaction holds the writer, and sees the last commit', async () => {
    t = await buildTestApp({ dataset: catalog() });
    // A key's first use is an attempt, counted (a write) before it is looked up; once verified
    // it is known good and its requests only read.
    await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(200);
    await request(t.app).get('/v1/devices/options').set('X-API-Key', keys.ana).expect(200);
    const held = holdWriter(t, '2026-06-01T12:00:00.000000Z');
    await held.written;
    // Held across awaits: before the second connection, these waited for the commit.
    const devices = await request(t.app).get('/devices').timeout(5000).set('Authorization', `Bearer ${keys.ana}`).expect(200);
    expect((devices.body as { total: number }).total).toBeGreaterThan(0);
    await request(t.app).get('/v1/devices/options?q=a').set('X-API-Key', keys.ana).timeout(5000).expect(200);
    // Not yet committed: the reader does not see the row.
    expect(await t.all('SELECT id FROM readiness_probe WHERE id = 7')).toEqual([]);
    held.release();
    await held.done;
    // Committed: the next read sees it at once.
    expect(await t.all('SELECT id FROM readiness_probe WHERE id = 7')).toEqual([{ id: 7 }]);
  });

  onSqlite('a key verified minutes ago is looked up again without a write: its request answers while a transaction holds the writer', async () => {
    const clock = new ManualClock(Date.now());
    t = await buildTestApp({ dataset: catalog(), clock });
    await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(200);
    // Past the 5 s in which a verified key is not looked up again: the next request reads its key row.
    clock.advance(60_000);
    const held = holdWriter(t, '2026-06-01T12:00:00.000000Z');
    await held.written;
    await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).timeout(2000).expect(200);
    held.release();
    await held.done;
  });

  onSqlite('a write kept waiting for the writer past DATABASE_TIMEOUT_MS answers 503 with Retry-After, and the writer is fine after', async () => {
    t = await buildTestApp({ dataset: catalog(), env: { DATABASE_TIMEOUT_MS: '300', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
    await request(t.app).get('/v1/hooks').set('X-API-Key', keys.ana).expect(200);
    const held = holdWriter(t, '2026-06-01T12:00:00.000000Z');
    await held.written;
    const started = Date.now();
    const refused = await request(t.app)
      .post('/v1/hooks')
      .set('X-API-Key', keys.ana)
      .send({ target_url: 'http://127.0.0.1:9/hook' })
      .timeout(15_000)
      .expect(503);
    expect(refused.body).toEqual({ message: 'Database unavailable' });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Answered while the writer is still held (it is released only below): bounded by
    // DATABASE_TIMEOUT_MS, not by the holder; the bound is generous for a busy machine.
    expect(Date.now() - started).toBeLessThan(10_000);
    held.release();
    await held.done;
    await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: 'http://127.0.0.1:9/hook' }).expect(201);
  });

  onSqlite('a write waits for the writer and lands after the transaction, in order', async () => {
    t = await buildTestApp();
    const held = holdWriter(t, 'first');
    await held.written;
    let wrote = false;
    const write = sql`UPDATE readiness_probe SET checked_at = 'second' WHERE id = 7`.execute(t.db.kysely).then((result) => {
      wrote = true;
      return result;
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(wrote).toBe(false);
    held.release();
    await held.done;
    expect(Number((await write).numAffectedRows)).toBe(1);
    expect(await t.all('SELECT checked_at FROM readiness_probe WHERE id = 7')).toEqual([{ checked_at: 'second' }]);
  });

  onSqlite('a statement that writes and returns rows runs on the writer; a failed transaction leaves nothing', async () => {
    t = await buildTestApp();
    const inserted = await sql<{ id: number }>`INSERT INTO readiness_probe (id, checked_at) VALUES (8, 'x') RETURNING id`.execute(t.db.kysely);
    expect(inserted.rows).toEqual([{ id: 8 }]);
    await expect(
      t.db.transaction(async (trx) => {
        await sql`INSERT INTO readiness_probe (id, checked_at) VALUES (9, 'y')`.execute(trx);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await t.all('SELECT id FROM readiness_probe ORDER BY id')).toEqual([{ id: 8 }]);
    // The writer was given back: another write goes through.
    await sql`DELETE FROM readiness_probe WHERE id = 8`.execute(t.db.kysely);
    expect(await t.all('SELECT id FROM readiness_probe')).toEqual([]);
  });
});

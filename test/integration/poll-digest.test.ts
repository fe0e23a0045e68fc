import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { hashKey } from '../../src/auth/keys.js';
import { formatMicros } from '../../src/time/timestamps.js';

/**
 * A small key's snapshot digest (docs/triggers.md): a poll whose listing has the key's digest
 * records "nothing changed" without reading the snapshot, and only while the key still has that
 * digest. Two replicas on one database (the same SQLite file, or the same PostgreSQL schema),
 * embedded mode: Ana sees 01 (online), 02, 03 and 05 (offline); the heartbeat timeout is 5 minutes.
 */
const dev01 = 'a4:83:e7:1f:2b:01';
const timeoutMs = 300_000;
const intervalMs = 30_000;
const keyHash = hashKey(keys.ana);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function replicas(): Promise<[TestApp, TestApp, ManualClock]> {
  const dir = mkdtempSync(join(tmpdir(), 'digest-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const clock = new ManualClock();
  const common = { databasePath: join(dir, 'connector.db'), clock, env: { CONNECTOR_SECRET: 'ab'.repeat(32), POLL_INTERVAL_MS: String(intervalMs) } };
  const a = await buildTestApp({ ...common, dataset: catalog(), keep: true });
  cleanups.push(() => a.close());
  const b = await buildTestApp(common);
  cleanups.push(() => b.close());
  return [a, b, clock];
}

const digestOf = async (t: TestApp) =>
  (await t.one<{ snapshot_digest: string | null }>('SELECT snapshot_digest FROM watches WHERE key_hash = ?', keyHash))?.snapshot_digest;

describe('the snapshot digest of a small key', () => {
  test('a poll that found nothing changed from a digest the key no longer has records nothing; the next one records the change', async () => {
    const [a, b, clock] = await replicas();
    await request(a.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200, []);
    const baseline = await digestOf(a);
    expect(baseline).toMatch(/^[\w-]{32}$/);

    // Replica A takes the key when it is due (01 online, the baseline's digest) and stalls past its lease.
    clock.advance(intervalMs);
    const [stale] = await a.services.watches.claim('replica-a', { limit: 1, leaseMs: 1000 });
    expect(stale?.snapshot_digest).toBe(baseline);
    clock.advance(1001);
    // Meanwhile replica B polls it: 01 went offline (one event, another digest)…
    const [taken] = await b.services.watches.claim('replica-b', { limit: 1, leaseMs: 3_600_000 });
    clock.advance(timeoutMs);
    const offline = await b.services.poller.pollKey(taken!, { owner: 'replica-b' });
    expect(offline.map((e) => [e.type, e.device.id])).toEqual([['device.offline', dev01]]);
    expect(await digestOf(a)).not.toBe(baseline);
    // …and came back, so the listing has the baseline's digest again (at the key's next poll time).
    clock.advance(intervalMs);
    await a.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', formatMicros(clock.now() * 1000), dev01);

    // A holds the key again, but polls it with what it claimed first: its "nothing changed"
    // was decided from a digest the key no longer has, so it records nothing.
    const [fresh] = await a.services.watches.claim('replica-a', { limit: 1, leaseMs: 60_000 });
    expect(fresh?.key_hash).toBe(keyHash);
    await expect(a.services.poller.pollKey(stale!, { owner: 'replica-a' })).rejects.toThrow('poll lease lost');
    // Polled with the key's digest, the listing is compared row by row: 01 is back online, once.
    const online = await a.services.poller.pollKey(fresh!, { owner: 'replica-a' });
    expect(online.map((e) => [e.type, e.device.id])).toEqual([['device.online', dev01]]);
    // The same statuses as at the baseline: the same digest.
    expect(await digestOf(a)).toBe(baseline);
    // Nothing changed since: recorded from the digest, no event.
    clock.advance(intervalMs);
    const [again] = await b.services.watches.claim('replica-b', { limit: 1, leaseMs: 60_000 });
    await expect(b.services.poller.pollKey(again!, { owner: 'replica-b' })).resolves.toEqual([]);
    const logged = await request(a.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
    expect((logged.body as Array<{ type: string }>).map((e) => e.type)).toEqual(['device.online', 'device.offline']);
  });
});

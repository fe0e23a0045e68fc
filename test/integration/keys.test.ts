/**
 * Key lifecycle and the per-key rate limit over HTTP (docs/keys.md): expired and revoked keys
 * are 401s that say which, a missing scope is named, every answer to a good key carries the
 * RateLimit headers, a key over its limit gets 429 with Retry-After and its tokens come back
 * as the (injected) clock moves, a key's own limit overrides the default, and the last use is
 * written to the minute without a write per request.
 */
import { afterEach, describe, expect, test } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { testEngine } from '../helpers/engine.js';

// Replicas share a count through PostgreSQL; SQLite, which one process serves, counts in that process.
const onPostgres = testEngine === 'postgres' ? test : test.skip;

let t: TestApp;
afterEach(async () => t?.close());

const me = (key: string) => request(t.app).get('/v1/me').set('X-API-Key', key);

function catalogWith(extra: Array<Record<string, unknown>>) {
  const data = catalog() as { api_keys: Array<Record<string, unknown>> };
  data.api_keys.push(...extra);
  return data;
}

const expiringKey = 'sk_test_expiring_key_000000000';
const limitedKey = 'sk_test_limited_key_0000000000';

describe('key lifecycle', () => {
  test('a key past its expires_at is a 401 "API key expired", also when it was verified a moment before', async () => {
    t = await buildTestApp({
      dataset: catalogWith([{ id: 'key_exp', user_id: 'usr_ana', name: 'Expiring', key: expiringKey, scopes: ['menu:read'], expires_at: 'now+90s' }]),
    });
    await me(expiringKey).expect(200);
    t.clock.advance(91_000);
    await me(expiringKey).expect(401, { message: 'API key expired' });
    await request(t.app)
      .get('/devices')
      .set('Authorization', `Bearer ${expiringKey}`)
      .expect(401, { message: 'API key expired' })
      .expect('WWW-Authenticate', 'Bearer');
  });

  test('a revoked key is a 401 "API key revoked" within the 5 s a replica trusts what it verified', async () => {
    t = await buildTestApp({ dataset: catalog() });
    await me(keys.ben).expect(200);
    // Revoked by another replica (straight in the database): this one still knows it as good...
    await t.db.kysely.updateTable('api_keys').set({ revoked_at: '2026-06-01T12:00:00.000000Z' }).where('id', '=', 'key_ben').execute();
    t.clock.advance(5001);
    await me(keys.ben).expect(401, { message: 'API key revoked' });
  });

  test('a missing scope is named in details', async () => {
    t = await buildTestApp({ dataset: catalog() });
    const res = await request(t.app).get('/v1/menus').set('X-API-Key', keys.anaNoScopes).expect(403);
    expect(res.body).toEqual({ message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] });
    // The refusal of a good key carries its rate limit too.
    expect(res.headers['ratelimit-policy']).toBe('"default";q=1200;w=60');
  });

  test('the import stores the prefix of a plain key, none for a hash, and the expiry and own limit', async () => {
    t = await buildTestApp({
      dataset: catalogWith([
        {
          id: 'key_lim',
          user_id: 'usr_ana',
          name: 'Limited',
          key: limitedKey,
          scopes: ['menu:read'],
          rate_limit_per_minute: 5,
          expires_at: '2030-01-01T00:00:00Z',
        },
      ]),
    });
    const row = await t.one<Record<string, unknown>>("SELECT prefix, expires_at, rate_limit_per_minute, last_used_at FROM api_keys WHERE id = 'key_lim'");
    expect(row).toEqual({ prefix: 'sk_test_', expires_at: '2030-01-01T00:00:00.000000Z', rate_limit_per_minute: 5, last_used_at: null });
  });

  test('last_used_at is kept to the minute and written by the flush, not by each request', async () => {
    t = await buildTestApp({ dataset: catalog() });
    for (let i = 0; i < 5; i++) await me(keys.ana).expect(200);
    expect(await t.value("SELECT last_used_at FROM api_keys WHERE id = 'key_ana'")).toBeNull();
    await t.services.close();
    expect(await t.value("SELECT last_used_at FROM api_keys WHERE id = 'key_ana'")).toBe('2026-06-01T12:00:00.000000Z');
    expect(await t.value("SELECT last_used_at FROM api_keys WHERE id = 'key_ben'")).toBeNull();
  });
});

describe('per-key rate limit', () => {
  test('every keyed answer carries RateLimit-Policy and RateLimit; over the limit 429 with Retry-After; tokens refill with time', async () => {
    t = await buildTestApp({ dataset: catalog(), env: { RATE_LIMIT_PER_MINUTE: '6' } });
    const lefts: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await me(keys.ana).expect(200);
      expect(res.headers['ratelimit-policy']).toBe('"default";q=6;w=60');
      const match = /^"default";r=(\d+);t=(\d+)$/.exec(res.headers.ratelimit ?? '');
      expect(match).not.toBeNull();
      lefts.push(Number(match![1]));
    }
    expect(lefts.at(-1)).toBe(0);
    const refused = await me(keys.ana).expect(429, { message: 'Rate limit exceeded' });
    expect(refused.headers['retry-after']).toBe('10');
    expect(refused.headers.ratelimit).toMatch(/^"default";r=0;t=\d+$/);
    // Another key is not affected.
    await me(keys.ben).expect(200);
    // One minute's quota refills over the minute: one token every 10 s.
    t.clock.advance(10_000);
    await me(keys.ana).expect(200);
    await me(keys.ana).expect(429);
    t.clock.advance(60_000);
    for (let i = 0; i < 6; i++) await me(keys.ana).expect(200);
    await me(keys.ana).expect(429);
  });

  test("a key's own limit overrides RATE_LIMIT_PER_MINUTE, also when that is 0 (off)", async () => {
    t = await buildTestApp({
      dataset: catalogWith([{ id: 'key_lim', user_id: 'usr_ana', name: 'Limited', key: limitedKey, scopes: ['menu:read'], rate_limit_per_minute: 2 }]),
      env: { RATE_LIMIT_PER_MINUTE: '0' },
    });
    const open = await me(keys.ana).expect(200);
    expect(open.headers['ratelimit-policy']).toBeUndefined();
    for (let i = 0; i < 2; i++) expect((await me(limitedKey).expect(200)).headers['ratelimit-policy']).toBe('"default";q=2;w=60');
    expect((await me(limitedKey).expect(429)).headers['retry-after']).toBe('30');
  });

  onPostgres('the count is shared through the database: two apps on one database grant the limit once between them', async () => {
    // One schema, named after the same path.
    const path = join(mkdtempSync(join(tmpdir(), 'keys-')), 'connector.db');
    t = await buildTestApp({ dataset: catalog(), env: { RATE_LIMIT_PER_MINUTE: '10' }, keep: true, databasePath: path });
    const other = await buildTestApp({ env: { RATE_LIMIT_PER_MINUTE: '10' }, clock: t.clock, databasePath: path });
    try {
      let granted = 0;
      for (let i = 0; i < 30; i++) {
        const app = i % 2 === 0 ? t.app : other.app;
        const res = await request(app).get('/v1/me').set('X-API-Key', keys.ana);
        if (res.status === 200) granted++;
        else expect(res.status).toBe(429);
      }
      expect(granted).toBe(10);
    } finally {
      await other.close();
    }
  });

  test('upstream mode: the limit applies per key hash, and a refused request never reaches the upstream', async () => {
    const upstream = await new FakeUpstream(catalog()).start();
    try {
      t = await buildTestApp({ env: { MENU_API_URL: upstream.baseUrl, RATE_LIMIT_PER_MINUTE: '3' } });
      for (let i = 0; i < 3; i++) {
        const res = await request(t.app).get('/v1/menus').set('X-API-Key', keys.ana).expect(200);
        expect(res.headers['ratelimit-policy']).toBe('"default";q=3;w=60');
      }
      const calls = upstream.callsTo('/v1/menus').length;
      await request(t.app).get('/v1/menus').set('X-API-Key', keys.ana).expect(429, { message: 'Rate limit exceeded' });
      expect(upstream.callsTo('/v1/menus')).toHaveLength(calls);
      await request(t.app).get('/v1/menus').set('X-API-Key', keys.ben).expect(200);
    } finally {
      await t.close();
      t = undefined as unknown as TestApp;
      await upstream.stop();
    }
  });
});

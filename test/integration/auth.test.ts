/**
 * Keys, scopes and access over HTTP (docs/api.md): which header each area takes, the
 * 401/403/429 answers, the failed-attempt limit on the injected clock, and that keys never
 * reach the log. Every test gets a fresh app, so failed attempts never leak between tests.
 */
import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import type { Express } from 'express';
import request from 'supertest';
import { hashKey } from '../../src/auth/keys.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { catalog, keys, menuIds } from '../fixtures/catalog.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { openTestDatabase } from '../helpers/engine.js';
import { importDataset } from '../../src/dataset/import.js';
import { createLogger } from '../../src/logger.js';
import { buildServices, type Services } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import type { KeyVerifier } from '../../src/auth/embedded-keys.js';

const bearer = (key: string): [string, string] => ['Authorization', `Bearer ${key}`];
const apiKey = (key: string): [string, string] => ['X-API-Key', key];

/** A key with `device:read` only, added to the fixture for the menu-area 403. */
const deviceOnlyKey = 'sk_test_ana_device_only_0000000';

function authCatalog() {
  const data = catalog();
  data.api_keys.push({
    id: 'key_ana_dev',
    user_id: 'usr_ana',
    name: 'Devices only',
    key: deviceOnlyKey,
    scopes: ['device:read'],
  });
  return data;
}

/** Well-formed (16–256 printable ASCII) keys that are in no catalog. */
const unknownKeys = {
  min: 'sk_unknown_00000', // 16
  max: `sk_${'u'.repeat(253)}`, // 256
  typical: 'sk_test_nobody_has_this_key_00000',
};

/** Keys the format check must reject before any look-up. */
const malformedKeys: Array<[string, string]> = [
  ['too short (15)', 'sk_short_000000'],
  ['too long (257)', `sk_${'x'.repeat(254)}`],
  ['with a space', 'sk_test_ana_all scopes_000000000'],
  ['with a tab', 'sk_test_ana_all\tscopes_000000000'],
  ['non-ASCII', 'sk_test_ana_all_scopés_000000000'],
];

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp({ dataset: authCatalog() });
});
afterEach(async () => t.close());

/** An app built by hand, so the test can wrap the key verifier and capture the log. */
interface CustomApp {
  app: Express;
  services: Services;
  clock: ManualClock;
  db: Db;
  verified: string[];
  lines: string[];
  close(): Promise<void>;
}

async function customApp(tweak: (services: Services) => Services = (s) => s): Promise<CustomApp> {
  const lines: string[] = [];
  const verified: string[] = [];
  const config = loadConfig({ LOG_LEVEL: 'info', DATABASE_PATH: ':memory:' });
  const clock = new ManualClock();
  const { db, drop } = await openTestDatabase();
  await importDataset(db, authCatalog(), { nowMs: clock.now() });
  const logger = createLogger('info', { write: (line: string) => void lines.push(line) });
  const built = buildServices({ config, logger, clock, db });
  const spy = (inner: KeyVerifier): KeyVerifier =>
    Object.assign(
      async (key: string) => {
        verified.push(key);
        return inner(key);
      },
      { isKnownGood: inner.isKnownGood },
    );
  // Every verifier the services hold is wrapped, whatever areas they name.
  const wrapped = Object.fromEntries(Object.entries(built.keys).map(([area, verify]) => [area, spy(verify)]));
  const services = tweak({ ...built, keys: wrapped as Services['keys'] });
  return {
    app: createApp(services),
    services,
    clock,
    db,
    verified,
    lines,
    async close() {
      await services.close();
      await db.close();
      await drop();
    },
  };
}

/** Waits (without sleeping) until the response-finish log lines have been written. */
async function settle(lines: string[], count: number): Promise<void> {
  for (let i = 0; i < 100 && lines.filter((l) => JSON.parse(l).msg === 'request').length < count; i++) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe('happy path', () => {
  test('device area takes Authorization: Bearer', async () => {
    const res = await request(t.app)
      .get('/devices')
      .set(...bearer(keys.ana))
      .expect(200);
    expect(res.body.total).toBe(4);
    await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:01')
      .set(...bearer(keys.ana))
      .expect(200);
  });

  test('the Bearer scheme name is case-insensitive (RFC 7235)', async () => {
    await request(t.app).get('/devices').set('Authorization', `bearer ${keys.ana}`).expect(200);
    await request(t.app).get('/devices').set('Authorization', `BEARER ${keys.ana}`).expect(200);
  });

  test('a key with device:read only is enough for the device area', async () => {
    await request(t.app)
      .get('/devices')
      .set(...bearer(deviceOnlyKey))
      .expect(200);
  });

  test('/v1/menus takes X-API-Key', async () => {
    const res = await request(t.app)
      .get('/v1/menus')
      .set(...apiKey(keys.ana))
      .expect(200);
    expect(res.body.metadata.menus.total).toBe(2);
    await request(t.app)
      .get('/v1/menus')
      .set(...apiKey(keys.anaMenuOnly))
      .expect(200);
    await request(t.app)
      .get('/v1/groups')
      .set(...apiKey(keys.ana))
      .expect(200);
  });

  test('/v1/me describes the key and its account (X-API-Key)', async () => {
    const res = await request(t.app)
      .get('/v1/me')
      .set(...apiKey(keys.ana))
      .expect(200);
    expect(res.body).toEqual({
      key: { id: 'key_ana', name: 'All', scopes: expect.any(Array) },
      account: { id: 'acc_harbor', name: 'Harbor Street Diner' },
    });
    expect([...res.body.key.scopes].sort()).toEqual(['device:read', 'hooks:write', 'menu:read']);
  });

  test('/v1/me accepts Authorization: Bearer as well', async () => {
    const res = await request(t.app)
      .get('/v1/me')
      .set(...bearer(keys.zoe))
      .expect(200);
    expect(res.body).toEqual({
      key: { id: 'key_zoe', name: 'Zoe', scopes: expect.any(Array) },
      account: { id: 'acc_other', name: 'Other Co' },
    });
    expect([...res.body.key.scopes].sort()).toEqual(['device:read', 'hooks:write', 'menu:read']);
  });

  test("/v1/me reports exactly the key's scopes, and needs none", async () => {
    const menuOnly = await request(t.app)
      .get('/v1/me')
      .set(...apiKey(keys.anaMenuOnly))
      .expect(200);
    expect(menuOnly.body.key).toEqual({ id: 'key_ana_menu', name: 'Menu only', scopes: ['menu:read'] });
    const none = await request(t.app)
      .get('/v1/me')
      .set(...apiKey(keys.anaNoScopes))
      .expect(200);
    expect(none.body.key).toEqual({ id: 'key_ana_none', name: 'No scopes', scopes: [] });
    expect(none.body.account).toEqual({ id: 'acc_harbor', name: 'Harbor Street Diner' });
  });
});

describe('errors', () => {
  test('device area without a key → 401 Missing API key + WWW-Authenticate: Bearer', async () => {
    for (const path of ['/devices', '/devices/a4:83:e7:1f:2b:01', '/devices/00:00:00:00:00:00']) {
      const res = await request(t.app).get(path).expect(401);
      expect(res.body).toEqual({ message: 'Missing API key' });
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.headers['content-type']).toMatch(/^application\/json/);
    }
  });

  test('an empty Bearer or another scheme counts as no key, with a hint at the expected form', async () => {
    for (const value of ['Bearer', 'Bearer ', `Basic ${Buffer.from(`u:${keys.ana}`).toString('base64')}`, keys.ana]) {
      const res = await request(t.app).get('/devices').set('Authorization', value).expect(401);
      expect(res.body).toEqual({
        message: 'Missing API key',
        details: [{ path: 'Authorization', message: 'The Authorization header must be "Bearer <key>"' }],
      });
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(JSON.stringify(res.body)).not.toContain(keys.ana);
    }
  });

  test('X-API-Key is not accepted in the device area (→ 401 missing, details name the header it reads)', async () => {
    for (const path of ['/devices', '/devices/a4:83:e7:1f:2b:01']) {
      const res = await request(t.app)
        .get(path)
        .set(...apiKey(keys.ana))
        .expect(401);
      expect(res.body.message).toBe('Missing API key');
      expect(res.body.details).toEqual([{ path: 'Authorization', message: expect.stringContaining('Authorization header as "Bearer <key>"') }]);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(JSON.stringify(res.body)).not.toContain(keys.ana);
    }
  });

  test.each(malformedKeys)('device area, malformed key (%s) → 401 Invalid API key', async (_name, key) => {
    const res = await request(t.app)
      .get('/devices')
      .set(...bearer(key))
      .expect(401);
    expect(res.body).toEqual({ message: 'Invalid API key' });
  });

  test.each(Object.entries(unknownKeys))('device area, unknown key (%s) → 401 Invalid API key', async (_name, key) => {
    const res = await request(t.app)
      .get('/devices')
      .set(...bearer(key))
      .expect(401);
    expect(res.body).toEqual({ message: 'Invalid API key' });
    await request(t.app)
      .get('/devices/a4:83:e7:1f:2b:01')
      .set(...bearer(key))
      .expect(401, { message: 'Invalid API key' });
  });

  test.each(malformedKeys)('menu area, malformed key (%s) → 401 Invalid API key', async (_name, key) => {
    await request(t.app)
      .get('/v1/menus')
      .set(...apiKey(key))
      .expect(401, { message: 'Invalid API key' });
  });

  test('menu area and /v1/me, unknown key → 401 Invalid API key', async () => {
    await request(t.app)
      .get('/v1/menus')
      .set(...apiKey(unknownKeys.typical))
      .expect(401, { message: 'Invalid API key' });
    await request(t.app)
      .get('/v1/me')
      .set(...apiKey(unknownKeys.typical))
      .expect(401, { message: 'Invalid API key' });
    await request(t.app)
      .get('/v1/me')
      .set(...bearer(unknownKeys.typical))
      .expect(401, { message: 'Invalid API key' });
  });

  test('a key that differs from a real one only by case is unknown', async () => {
    await request(t.app)
      .get('/devices')
      .set(...bearer(keys.ana.toUpperCase()))
      .expect(401, { message: 'Invalid API key' });
  });

  test('device area, key without device:read → 403 Invalid scopes', async () => {
    for (const key of [keys.anaMenuOnly, keys.anaNoScopes]) {
      await request(t.app)
        .get('/devices')
        .set(...bearer(key))
        .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
      await request(t.app)
        .get('/devices/a4:83:e7:1f:2b:01')
        .set(...bearer(key))
        .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
    }
  });

  test('/v1/menus without a key → 401 Missing API key; a Bearer header alone is not a key there', async () => {
    await request(t.app).get('/v1/menus').expect(401, { message: 'Missing API key' });
    for (const path of ['/v1/menus', '/v1/groups', `/v1/menus/${menuIds.allDay}/groups/options`]) {
      const res = await request(t.app)
        .get(path)
        .set(...bearer(keys.ana))
        .expect(401);
      expect(res.body.message).toBe('Missing API key');
      expect(res.body.details).toEqual([{ path: 'X-API-Key', message: expect.stringContaining('reads the key from the X-API-Key header') }]);
    }
  });

  test('/v1/menus, key without menu:read → 403 Invalid scopes', async () => {
    await request(t.app)
      .get('/v1/menus')
      .set(...apiKey(deviceOnlyKey))
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] });
    await request(t.app)
      .get('/v1/menus')
      .set(...apiKey(keys.anaNoScopes))
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] });
    await request(t.app)
      .get('/v1/groups')
      .set(...apiKey(deviceOnlyKey))
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] });
  });

  test('/v1/me without a key → 401 Missing API key', async () => {
    await request(t.app).get('/v1/me').expect(401, { message: 'Missing API key' });
  });
});

describe('security', () => {
  test('the scope check comes before the device look-up: 403, not 404, for any id', async () => {
    await request(t.app)
      .get('/devices/00:00:00:00:00:00')
      .set(...bearer(keys.anaMenuOnly))
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
    await request(t.app)
      .get('/devices/b0:00:00:00:00:01')
      .set(...bearer(keys.anaMenuOnly))
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
  });

  test('error bodies never echo the key', async () => {
    const responses = await Promise.all([
      request(t.app)
        .get('/devices')
        .set(...bearer(unknownKeys.typical)),
      request(t.app)
        .get('/devices')
        .set(...bearer(keys.anaMenuOnly)),
      request(t.app)
        .get('/v1/menus')
        .set(...apiKey(deviceOnlyKey)),
      request(t.app)
        .get('/devices?page=0')
        .set(...bearer(keys.ana)),
      request(t.app)
        .get('/devices/nope')
        .set(...bearer(keys.ana)),
    ]);
    for (const res of responses) {
      const text = JSON.stringify({ body: res.body, headers: res.headers });
      for (const key of [unknownKeys.typical, keys.anaMenuOnly, deviceOnlyKey, keys.ana]) expect(text).not.toContain(key);
    }
  });

  test('/v1/me never returns the key or its hash', async () => {
    const res = await request(t.app)
      .get('/v1/me')
      .set(...apiKey(keys.ana))
      .expect(200);
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(keys.ana);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
  });

  describe('malformed keys are rejected without a look-up', () => {
    let c: CustomApp;
    beforeEach(async () => {
      c = await customApp();
    });
    afterEach(async () => c.close());

    test.each(malformedKeys)('%s never reaches the verifier', async (_name, key) => {
      await request(c.app)
        .get('/devices')
        .set(...bearer(key))
        .expect(401, { message: 'Invalid API key' });
      await request(c.app)
        .get('/v1/menus')
        .set(...apiKey(key))
        .expect(401, { message: 'Invalid API key' });
      expect(c.verified).toEqual([]);
    });

    test('well-formed keys of 16 and 256 characters are looked up', async () => {
      await request(c.app)
        .get('/devices')
        .set(...bearer(unknownKeys.min))
        .expect(401);
      await request(c.app)
        .get('/devices')
        .set(...bearer(unknownKeys.max))
        .expect(401);
      expect(c.verified).toEqual([unknownKeys.min, unknownKeys.max]);
    });
  });

  describe('failed-attempt limit (20 a minute per client)', () => {
    async function fail(app: Express, n: number): Promise<void> {
      for (let i = 0; i < n; i++) {
        await request(app)
          .get('/devices')
          .set(...bearer(`${unknownKeys.typical}${i}`))
          .expect(401, { message: 'Invalid API key' });
      }
    }

    test('after 20 failures the 21st request, even with a valid key, is 429 with Retry-After', async () => {
      await fail(t.app, 20);
      const res = await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(429);
      expect(res.body).toEqual({ message: 'Too many requests' });
      expect(res.headers['retry-after']).toMatch(/^\d+$/);
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(retryAfter).toBe(60); // the clock has not moved since the first failure
    });

    test('a malformed key counts as a failed attempt too', async () => {
      for (let i = 0; i < 20; i++) {
        await request(t.app)
          .get('/devices')
          .set(...bearer('short'))
          .expect(401, { message: 'Invalid API key' });
      }
      await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(429, { message: 'Too many requests' });
    });

    test('the 20th failure is still answered 401; only the next request is refused', async () => {
      await fail(t.app, 19);
      await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(200);
      await fail(t.app, 1);
      await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(429);
    });

    test('the block applies to every area and to /v1/me, and to further bad keys', async () => {
      await fail(t.app, 20);
      await request(t.app)
        .get('/devices/a4:83:e7:1f:2b:01')
        .set(...bearer(keys.ana))
        .expect(429, { message: 'Too many requests' });
      await request(t.app)
        .get('/v1/menus')
        .set(...apiKey(keys.ana))
        .expect(429, { message: 'Too many requests' });
      await request(t.app)
        .get('/v1/me')
        .set(...apiKey(keys.ana))
        .expect(429, { message: 'Too many requests' });
      const res = await request(t.app)
        .get('/devices')
        .set(...bearer(unknownKeys.typical))
        .expect(429);
      expect(res.headers['retry-after']).toBeDefined();
    });

    test('after the injected clock advances 60 s the client is accepted again', async () => {
      await fail(t.app, 20);
      t.clock.advance(30_000);
      const half = await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(429);
      expect(Number(half.headers['retry-after'])).toBe(30);
      t.clock.advance(29_999);
      const last = await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(429);
      expect(Number(last.headers['retry-after'])).toBe(1);
      t.clock.advance(1);
      await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(200);
      // A fresh window: a single new failure does not block again.
      await fail(t.app, 1);
      await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(200);
    });

    test('valid requests do not count as failures', async () => {
      for (let i = 0; i < 40; i++) {
        await request(t.app)
          .get('/devices')
          .set(...bearer(keys.ana))
          .expect(200);
      }
      await fail(t.app, 19);
      for (let i = 0; i < 10; i++) {
        await request(t.app)
          .get('/devices')
          .set(...bearer(keys.ana))
          .expect(200);
        await request(t.app)
          .get('/v1/menus')
          .set(...apiKey(keys.ana))
          .expect(200);
      }
      await request(t.app)
        .get('/v1/me')
        .set(...bearer(keys.ben))
        .expect(200);
    });

    test('a key known good, revoked since, counts as a failed attempt once its look-up refuses it', async () => {
      await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(200);
      await t.all('DELETE FROM api_keys WHERE key_sha256 = ?', hashKey(keys.ana));
      // Past the 5 s in which a verified key is not looked up again.
      t.clock.advance(6_000);
      await fail(t.app, 19);
      await request(t.app)
        .get('/devices')
        .set(...bearer(keys.ana))
        .expect(401, { message: 'Invalid API key' });
      await request(t.app)
        .get('/v1/me')
        .set(...bearer(keys.ben))
        .expect(429, { message: 'Too many requests' });
    });

    test('X-Forwarded-For does not let a client escape the limit', async () => {
      await fail(t.app, 20);
      await request(t.app)
        .get('/devices')
        .set('X-Forwarded-For', '203.0.113.7')
        .set(...bearer(keys.ana))
        .expect(429, { message: 'Too many requests' });
    });

    test("a blocked client's key is not even looked up", async () => {
      const c = await customApp();
      try {
        await fail(c.app, 20);
        expect(c.verified).toHaveLength(20);
        await request(c.app)
          .get('/devices')
          .set(...bearer(keys.ana))
          .expect(429);
        expect(c.verified).toHaveLength(20);
      } finally {
        await c.close();
      }
    });
  });

  describe('logging', () => {
    const allKeys = [keys.ana, keys.ben, keys.zoe, keys.anaMenuOnly, keys.anaNoScopes, deviceOnlyKey, ...Object.values(unknownKeys)];

    test('keys never appear in the log; one line per request with method, route, status, ms, requestId', async () => {
      const c = await customApp();
      try {
        const sent = [
          request(c.app)
            .get('/devices')
            .set(...bearer(keys.ana)),
          request(c.app)
            .get('/devices/A4:83:E7:1F:2B:01')
            .set(...bearer(keys.ana)),
          request(c.app)
            .get('/devices/b0:00:00:00:00:01')
            .set(...bearer(keys.ana)),
          request(c.app)
            .get('/devices?page=0')
            .set(...bearer(keys.ben)),
          request(c.app)
            .get('/devices')
            .set(...bearer(unknownKeys.typical)),
          request(c.app)
            .get('/devices')
            .set(...bearer(unknownKeys.max)),
          request(c.app)
            .get('/devices')
            .set(...bearer(malformedKeys[2]![1])),
          request(c.app)
            .get('/devices')
            .set(...bearer(keys.anaMenuOnly)),
          request(c.app)
            .get('/devices')
            .set(...apiKey(keys.zoe)),
          request(c.app)
            .get('/v1/menus')
            .set(...apiKey(keys.anaNoScopes)),
          request(c.app)
            .get('/v1/menus')
            .set(...apiKey(deviceOnlyKey)),
          request(c.app)
            .get('/v1/menus')
            .set(...apiKey(keys.ana)),
          request(c.app)
            .get('/v1/me')
            .set(...bearer(keys.zoe)),
          request(c.app)
            .get('/v1/me')
            .set(...apiKey(unknownKeys.min)),
          request(c.app)
            .get('/nope')
            .set(...bearer(keys.ana))
            .set(...apiKey(keys.ben)),
        ];
        const responses = [];
        for (const req of sent) responses.push(await req);
        expect(responses.map((r) => r.status)).toEqual([200, 200, 404, 400, 401, 401, 401, 403, 401, 403, 403, 200, 200, 401, 404]);
        await settle(c.lines, responses.length);

        const text = c.lines.join('');
        for (const key of allKeys) expect(text).not.toContain(key);
        expect(text).not.toContain('Bearer');

        const requestLines = c.lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
        expect(requestLines).toHaveLength(responses.length);
        for (const [i, line] of requestLines.entries()) {
          expect(line).toEqual(
            expect.objectContaining({
              method: 'GET',
              route: expect.any(String),
              status: expect.any(Number),
              ms: expect.any(Number),
              requestId: expect.any(String),
            }),
          );
          expect(line.ms).toBeGreaterThanOrEqual(0);
          expect(line.headers).toBeUndefined();
          expect(line.req).toBeUndefined();
          // Lines are written as each response finishes; requests were sent one at a time.
          expect(line.status).toBe(responses[i]!.status);
          expect(line.requestId).toBe(responses[i]!.headers['x-request-id']);
        }
        // The route is the pattern, not the concrete id, and never carries the query string.
        expect(requestLines[1]!.route).toBe('/devices/:id');
        expect(requestLines[3]!.route).toBe('/devices');
      } finally {
        await c.close();
      }
    });

    test('an unexpected error is a 500 "Internal error"; details go to the log, keys do not', async () => {
      const c = await customApp((s) => ({
        ...s,
        devices: {
          ...s.devices,
          // A stand-in with no request view of its own: the router uses it as it is.
          within: undefined,
          list: async () => {
            throw new Error('database on fire');
          },
        },
      }));
      try {
        const res = await request(c.app)
          .get('/devices')
          .set(...bearer(keys.ana))
          .set('X-Request-Id', 'req-500-test');
        expect(res.status).toBe(500);
        expect(res.body).toEqual({ message: 'Internal error' });
        expect(JSON.stringify(res.body)).not.toContain('fire');
        // The process keeps serving.
        await request(c.app)
          .get('/devices/a4:83:e7:1f:2b:01')
          .set(...bearer(keys.ana))
          .expect(200);
        await settle(c.lines, 2);
        const text = c.lines.join('');
        expect(text).toContain('database on fire');
        for (const key of allKeys) expect(text).not.toContain(key);
        const lines = c.lines.map((l) => JSON.parse(l));
        expect(lines.find((l) => l.msg === 'request' && l.status === 500)).toMatchObject({
          method: 'GET',
          route: '/devices',
          requestId: 'req-500-test',
        });
      } finally {
        await c.close();
      }
    });

    test('an incoming well-formed X-Request-Id is echoed and logged', async () => {
      const c = await customApp();
      try {
        const id = 'client-req_42.abc:7';
        const res = await request(c.app)
          .get('/devices')
          .set(...bearer(keys.ana))
          .set('X-Request-Id', id)
          .expect(200);
        expect(res.headers['x-request-id']).toBe(id);
        const denied = await request(c.app).get('/devices').set('X-Request-Id', 'denied-1').expect(401);
        expect(denied.headers['x-request-id']).toBe('denied-1');
        await settle(c.lines, 2);
        const ids = c.lines
          .map((l) => JSON.parse(l))
          .filter((l) => l.msg === 'request')
          .map((l) => l.requestId);
        expect(ids).toEqual([id, 'denied-1']);
      } finally {
        await c.close();
      }
    });

    test.each([
      ['with spaces', 'abc def'],
      ['too long', 'r'.repeat(129)],
      ['with markup', '<script>alert(1)</script>'],
      ['with a newline-ish payload', 'abc%0d%0aX-Injected:1'],
      ['non-ASCII', 'req-\u00e9t\u00e9'],
    ])('a malformed X-Request-Id (%s) is replaced', async (_name, incoming) => {
      const c = await customApp();
      try {
        const res = await request(c.app)
          .get('/devices')
          .set(...bearer(keys.ana))
          .set('X-Request-Id', incoming)
          .expect(200);
        const id = res.headers['x-request-id'];
        expect(id).toBeDefined();
        expect(id).not.toBe(incoming);
        expect(id).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
        expect(res.headers['x-injected']).toBeUndefined();
        await settle(c.lines, 1);
        const text = c.lines.join('');
        expect(text).not.toContain(incoming);
        expect(text).toContain(id);
      } finally {
        await c.close();
      }
    });

    test('every response carries an X-Request-Id, unique per request when none is sent', async () => {
      const a = await request(t.app).get('/healthz').expect(200);
      const b = await request(t.app).get('/devices').expect(401);
      const c = await request(t.app).get('/nope').expect(404);
      const seen = [a, b, c].map((r) => r.headers['x-request-id']);
      for (const id of seen) expect(id).toMatch(/^[A-Za-z0-9._:-]{1,128}$/);
      expect(new Set(seen).size).toBe(3);
    });
  });
});

/**
 * The operator API (docs/keys.md) over HTTP: absent (404) without ADMIN_TOKEN, the token
 * checked and failures counted, accounts, users and keys listed and paged, a key created
 * (shown once) that works at once, changed, rolled with a grace period and revoked with no
 * restart, queue health, and 409 for keys in upstream mode.
 */
import { afterEach, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

const token = 'admin-token-for-tests-0123456789abcdef';
const admin = { Authorization: `Bearer ${token}` };

let t: TestApp;
afterEach(async () => t?.close());

const operatorApp = (env: Record<string, string> = {}) => buildTestApp({ dataset: catalog(), env: { ADMIN_TOKEN: token, ...env } });

describe('the token', () => {
  test('without ADMIN_TOKEN every /admin path is 404 Not found, with or without a token', async () => {
    t = await buildTestApp({ dataset: catalog() });
    await request(t.app).get('/admin/v1/accounts').set(admin).expect(404, { message: 'Not found' });
    await request(t.app).post('/admin/v1/keys').set(admin).send({}).expect(404, { message: 'Not found' });
    await request(t.app).get('/admin/v1/nothing').expect(404, { message: 'Not found' });
    await request(t.app).put('/admin/v1/keys').set(admin).expect(404, { message: 'Not found' });
    await request(t.app).options('/admin/v1/keys').expect(404, { message: 'Not found' });
  });

  test('a missing or wrong token is a 401, counted by the failed-attempt limit; an API key is no token', async () => {
    t = await operatorApp();
    await request(t.app).get('/admin/v1/accounts').expect(401).expect('WWW-Authenticate', 'Bearer');
    await request(t.app).get('/admin/v1/accounts').set('Authorization', `Bearer ${keys.ana}`).expect(401, { message: 'Invalid admin token' });
    for (let i = 0; i < 18; i++) await request(t.app).get('/admin/v1/accounts').set('Authorization', `Bearer wrong-${i}-token-000000000000000000`).expect(401);
    const blocked = await request(t.app).get('/admin/v1/accounts').set(admin).expect(429, { message: 'Too many requests' });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
  });
});

describe('listing', () => {
  test('accounts, users of an account, keys of a user: paged with Link and X-Total-Count, never a hash', async () => {
    t = await operatorApp();
    const accounts = await request(t.app).get('/admin/v1/accounts').set(admin).expect(200);
    expect(accounts.body).toEqual([
      { id: 'acc_harbor', name: 'Harbor Street Diner', users: 2, keys: 4 },
      { id: 'acc_other', name: 'Other Co', users: 1, keys: 1 },
    ]);
    const users = await request(t.app).get('/admin/v1/users?account_id=acc_harbor').set(admin).expect(200);
    expect(users.body.map((u: { id: string }) => u.id)).toEqual(['usr_ana', 'usr_ben']);
    const first = await request(t.app).get('/admin/v1/keys?account_id=acc_harbor&limit=3').set(admin).expect(200);
    expect(first.headers['x-total-count']).toBe('4');
    expect(first.body).toHaveLength(3);
    const text = JSON.stringify(first.body);
    expect(text).not.toMatch(/sha256|[0-9a-f]{64}/);
    for (const key of Object.values(keys)) expect(text).not.toContain(key);
    expect(first.body[0]).toMatchObject({
      id: 'key_ana',
      user_id: 'usr_ana',
      account_id: 'acc_harbor',
      prefix: 'sk_test_',
      status: 'active',
      revoked_at: null,
    });
    const next = /<([^>]+)>; rel="next"/.exec(first.headers.link ?? '')![1]!;
    const second = await request(t.app)
      .get(new URL(next).pathname + new URL(next).search)
      .set(admin)
      .expect(200);
    expect(second.body.map((k: { id: string }) => k.id)).toEqual(['key_ben']);
    expect(second.headers.link).toBeUndefined();
    await request(t.app)
      .get('/admin/v1/keys?user_id=usr_zoe')
      .set(admin)
      .expect(200)
      .expect((res) => expect(res.body).toHaveLength(1));
    await request(t.app)
      .get('/admin/v1/keys?limit=0')
      .set(admin)
      .expect(400, { message: 'limit must be an integer from 1 to 500', details: [{ path: 'limit', message: 'limit must be an integer from 1 to 500' }] });
  });
});

describe('a key from creation to revocation, no restart', () => {
  test('create (shown once) → works at once; change; roll with grace; revoke (idempotent)', async () => {
    t = await operatorApp();
    const created = await request(t.app)
      .post('/admin/v1/keys')
      .set(admin)
      .send({ user_id: 'usr_ben', scopes: ['menu:read'], name: 'Zapier', rate_limit_per_minute: 100 })
      .expect(201);
    const { key, id } = created.body as { key: string; id: string };
    expect(created.body).toMatchObject({
      user_id: 'usr_ben',
      account_id: 'acc_harbor',
      scopes: ['menu:read'],
      name: 'Zapier',
      prefix: key.slice(0, 8),
      rate_limit_per_minute: 100,
      status: 'active',
      expires_at: null,
    });
    const me = await request(t.app).get('/v1/me').set('X-API-Key', key).expect(200);
    expect(me.headers['ratelimit-policy']).toBe('"default";q=100;w=60');
    expect((await request(t.app).get(`/admin/v1/keys?user_id=usr_ben`).set(admin)).body.some((k: { key?: string }) => k.key !== undefined)).toBe(false);

    // Change: the device scope is added; this replica applies it at once.
    await request(t.app).get('/devices').set('Authorization', `Bearer ${key}`).expect(403);
    const changed = await request(t.app)
      .patch(`/admin/v1/keys/${id}`)
      .set(admin)
      .send({ scopes: ['menu:read', 'device:read'], rate_limit_per_minute: null })
      .expect(200);
    expect(changed.body).toMatchObject({ scopes: ['menu:read', 'device:read'], rate_limit_per_minute: null });
    await request(t.app).get('/devices').set('Authorization', `Bearer ${key}`).expect(200);

    // Roll: a new key with the same user, scopes and limit; the old one works for the grace.
    const rolled = await request(t.app).post(`/admin/v1/keys/${id}/roll`).set(admin).send({ grace_seconds: 60 }).expect(201);
    expect(rolled.body.key).not.toBe(key);
    expect(rolled.body).toMatchObject({ user_id: 'usr_ben', scopes: ['menu:read', 'device:read'], name: 'Zapier' });
    await request(t.app).get('/v1/me').set('X-API-Key', rolled.body.key).expect(200);
    await request(t.app).get('/v1/me').set('X-API-Key', key).expect(200);
    // Rolling again is safe and never extends the old key's life.
    const again = await request(t.app).post(`/admin/v1/keys/${id}/roll`).set(admin).send({ grace_seconds: 3600 }).expect(201);
    expect(again.body.key).not.toBe(rolled.body.key);
    t.clock.advance(61_000);
    await request(t.app).get('/v1/me').set('X-API-Key', key).expect(401, { message: 'API key expired' });
    await request(t.app).get('/v1/me').set('X-API-Key', rolled.body.key).expect(200);

    // Revoke: 204, again 204, refused at once; a revoked key cannot be rolled.
    await request(t.app).delete(`/admin/v1/keys/${rolled.body.id}`).set(admin).expect(204);
    await request(t.app).delete(`/admin/v1/keys/${rolled.body.id}`).set(admin).expect(204);
    await request(t.app).get('/v1/me').set('X-API-Key', rolled.body.key).expect(401, { message: 'API key revoked' });
    await request(t.app).post(`/admin/v1/keys/${rolled.body.id}/roll`).set(admin).send({ grace_seconds: 0 }).expect(409);
    const listed = await request(t.app).get('/admin/v1/keys?user_id=usr_ben').set(admin).expect(200);
    const statuses = Object.fromEntries(listed.body.map((k: { id: string; status: string }) => [k.id, k.status]));
    expect(statuses).toMatchObject({ [id]: 'expired', [rolled.body.id]: 'revoked', [again.body.id]: 'active' });
  });

  test('bad input is a 400 that names it; unknown ids are 404 Key not found', async () => {
    t = await operatorApp();
    const bad = await request(t.app)
      .post('/admin/v1/keys')
      .set(admin)
      .send({ user_id: 'usr_ben', scopes: ['menu:write'], name: '', rate_limit_per_minute: 0 })
      .expect(400);
    expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['name', 'rate_limit_per_minute', 'scopes[0]']);
    await request(t.app).post('/admin/v1/keys').set(admin).send({ user_id: 'usr_nobody', scopes: [], name: 'x' }).expect(400);
    await request(t.app)
      .post('/admin/v1/keys')
      .set(admin)
      .send({ user_id: 'usr_ben', scopes: [], name: 'x', expires_at: '2020-01-01T00:00:00Z' })
      .expect(400, { message: 'expires_at must be in the future', details: [{ path: 'expires_at', message: 'must be in the future' }] });
    await request(t.app).patch('/admin/v1/keys/key_ben').set(admin).send({}).expect(400);
    await request(t.app).patch('/admin/v1/keys/key_nobody').set(admin).send({ name: 'x' }).expect(404, { message: 'Key not found' });
    await request(t.app).delete('/admin/v1/keys/key_nobody').set(admin).expect(404, { message: 'Key not found' });
    await request(t.app).post('/admin/v1/keys/key_ben/roll').set(admin).send({ grace_seconds: -1 }).expect(400);
  });
});

describe('queue health and upstream mode', () => {
  test('GET /admin/v1/queue answers the queue per origin and the poller', async () => {
    t = await operatorApp();
    const res = await request(t.app).get('/admin/v1/queue').set(admin).expect(200);
    expect(res.body).toEqual({ origins: [], poller: { watched_keys: 0, overdue_keys: 0, oldest_overdue_ms: 0, paused_keys: 0 } });
  });

  test('upstream mode: the key endpoints answer 409 saying keys belong to the upstream', async () => {
    t = await operatorApp({ DEVICE_API_URL: 'http://127.0.0.1:9' });
    const res = await request(t.app).get('/admin/v1/keys').set(admin).expect(409);
    expect(res.body.message).toMatch(/upstream/);
    await request(t.app).post('/admin/v1/keys').set(admin).send({ user_id: 'usr_ben', scopes: [], name: 'x' }).expect(409);
    await request(t.app).get('/admin/v1/accounts').set(admin).expect(200);
  });
});

import { afterAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

/** WEBHOOK_MAX_HOOKS_PER_KEY (docs/webhooks.md): a key holds at most that many hooks that are not disabled. */
const apps: TestApp[] = [];
afterAll(async () => {
  for (const t of apps) await t.close();
});

async function app(max: number): Promise<TestApp> {
  const t = await buildTestApp({
    dataset: catalog(),
    clock: new ManualClock(Date.now()),
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_MAX_HOOKS_PER_KEY: String(max) },
  });
  apps.push(t);
  return t;
}

const auth = { 'X-API-Key': keys.ana };
const subscribe = (t: TestApp, n: number) =>
  request(t.app)
    .post('/v1/hooks')
    .set(auth)
    .send({ target_url: `http://127.0.0.1:9/hook/${n}` });

test('one hook past the limit is a 409 naming it; the same subscription again, a deleted or a disabled hook do not count', async () => {
  const t = await app(3);
  const made = [];
  for (let n = 1; n <= 3; n++) made.push((await subscribe(t, n).expect(201)).body);
  const refused = await subscribe(t, 4).expect(409);
  expect(refused.body).toEqual({ message: expect.stringContaining('3 hooks') });
  expect(refused.body.message).toContain('WEBHOOK_MAX_HOOKS_PER_KEY');
  // Idempotent re-subscription is not a new hook.
  expect((await subscribe(t, 2).expect(200)).body.id).toBe(made[1].id);
  // Another key has its own allowance.
  await request(t.app).post('/v1/hooks').set({ 'X-API-Key': keys.zoe }).send({ target_url: 'http://127.0.0.1:9/zoe' }).expect(201);

  await request(t.app).delete(`/v1/hooks/${made[0].id}`).set(auth).expect(204);
  await subscribe(t, 4).expect(201);
  await subscribe(t, 5).expect(409);

  await t.db.kysely.updateTable('hooks').set({ status: 'disabled' }).where('id', '=', made[1].id).execute();
  await subscribe(t, 5).expect(201);
  expect((await request(t.app).get('/v1/hooks').set(auth).expect(200)).body).toHaveLength(4);
});

test('concurrent subscriptions cannot slip past the limit together', async () => {
  const t = await app(5);
  const answers = await Promise.all(Array.from({ length: 12 }, (_, n) => subscribe(t, 100 + n)));
  expect(answers.filter((res) => res.status === 201)).toHaveLength(5);
  expect(answers.filter((res) => res.status === 409)).toHaveLength(7);
  expect(Number(await t.value('SELECT count(*) FROM hooks'))).toBe(5);
});

test('GET /v1/hooks pages: limit, Link rel="next" with an opaque cursor, X-Total-Count; bad parameters are named', async () => {
  const t = await app(1000);
  const ids: string[] = [];
  for (let n = 1; n <= 5; n++) {
    ids.push((await subscribe(t, n).expect(201)).body.id);
    t.clock.advance(1);
  }
  await request(t.app).post('/v1/hooks').set({ 'X-API-Key': keys.zoe }).send({ target_url: 'http://127.0.0.1:9/zoe' }).expect(201);

  const seen: string[] = [];
  let next: string | undefined = '/v1/hooks?limit=2';
  let pages = 0;
  while (next) {
    const res = await request(t.app).get(next).set(auth).expect(200);
    expect(res.headers['x-total-count']).toBe('5');
    expect(res.body.length).toBeLessThanOrEqual(2);
    for (const hook of res.body) expect(hook.secret).toBeUndefined();
    seen.push(...res.body.map((h: { id: string }) => h.id));
    const link = res.headers.link as string | undefined;
    next = link ? new URL(/^<([^>]+)>; rel="next"$/.exec(link)![1]!).pathname + new URL(/^<([^>]+)>/.exec(link)![1]!).search : undefined;
    pages += 1;
  }
  expect(pages).toBe(3);
  expect(seen).toEqual(ids);

  const all = await request(t.app).get('/v1/hooks').set(auth).expect(200);
  expect(all.body.map((h: { id: string }) => h.id)).toEqual(ids);
  expect(all.headers.link).toBeUndefined();

  const bad = await request(t.app).get('/v1/hooks?limit=501&cursor=nope').set(auth).expect(400);
  expect(bad.body.details.map((d: { path: string }) => d.path).sort()).toEqual(['cursor', 'limit']);
});

test('a page of 100 by default, however many hooks the key holds', async () => {
  const t = await app(1000);
  // Ten at a time: subscriptions of one key queue on its hook count, and 130 at once could wait
  // past DATABASE_TIMEOUT_MS on a busy machine (a 503, as documented); paging is the subject here.
  for (let n = 0; n < 130; n += 10) await Promise.all(Array.from({ length: 10 }, (_, i) => subscribe(t, 1000 + n + i).expect(201)));
  const first = await request(t.app).get('/v1/hooks').set(auth).expect(200);
  expect(first.body).toHaveLength(100);
  expect(first.headers['x-total-count']).toBe('130');
  expect(first.headers.link).toMatch(/rel="next"$/);
});

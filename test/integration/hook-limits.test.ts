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
const subscribe = (t: TestApp, n: number) => request(t.app).post('/v1/hooks').set(auth).send({ target_url: `http://127.0.0.1:9/hook/${n}` });

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

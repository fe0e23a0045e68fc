import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

let t: TestApp;
beforeAll(() => {
  t = buildTestApp({ dataset: catalog() });
});
afterAll(() => t.close());

test('healthz and readyz', async () => {
  await request(t.app).get('/healthz').expect(200, { status: 'ok' });
  await request(t.app).get('/readyz').expect(200, { status: 'ready', checks: { database: 'ok' } });
});

test('unknown route is a JSON 404', async () => {
  await request(t.app).get('/nope').expect(404, { message: 'Not found' });
});

test('device list works with a bearer key', async () => {
  const res = await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(200);
  expect(res.body.total).toBe(4);
});

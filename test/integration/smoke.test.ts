import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog() });
});
afterAll(async () => t.close());

test('healthz and readyz', async () => {
  await request(t.app).get('/healthz').expect(200, { status: 'ok' });
  await request(t.app)
    .get('/readyz')
    .expect(200, { status: 'ready', checks: { database: 'ok' } });
});

test('unknown route is a JSON 404', async () => {
  await request(t.app).get('/nope').expect(404, { message: 'Not found' });
});

test('device list works with a bearer key', async () => {
  const res = await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(200);
  expect(res.body.total).toBe(4);
});

test('the manifest is served with its base URL and schema URL taken from the request', async () => {
  const res = await request(t.app).get('/v1/manifest').set('Host', 'connector.example.com').expect(200);
  expect(res.body.baseUrl).toBe('http://connector.example.com');
  expect(res.body.$schema).toBe('http://connector.example.com/v1/manifest/schema');
  expect(res.body.optionSources[0]).toMatchObject({ path: '/v1/menus/options' });
  expect(res.body.auth.test.path).toBe('/v1/me');
});

test('a path parameter that is not valid percent-encoding is a 400, not a 500', async () => {
  await request(t.app).get('/devices/%E0%A4%A').set('Authorization', `Bearer ${keys.ana}`).expect(400, { message: 'The URL is not valid percent-encoding' });
});

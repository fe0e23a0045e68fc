import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * A 4xx answer's access line carries the message the client got (`reason`), so "400 on
 * POST /v1/hooks" in a log says why; the line still names the route pattern, never the path.
 */

const lines: string[] = [];
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog(), logLines: lines, env: { LOG_LEVEL: 'info' } });
});
afterAll(async () => {
  await t.close();
});

function accessLines(): Array<Record<string, unknown>> {
  return lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === 'request');
}

test('a 400 on POST /v1/hooks is logged with its reason', async () => {
  const res = await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: 'not a url' }).expect(400);
  const message = (res.body as { message: string }).message;
  expect(message.length).toBeGreaterThan(0);
  expect(accessLines().at(-1)).toMatchObject({ route: '/v1/hooks', method: 'POST', status: 400, reason: message });
});

test('a 401 and a 404 carry their reasons; a 200 has none', async () => {
  const denied = await request(t.app).get('/v1/me').set('X-API-Key', 'sk_wrong_0123456789abcdef').expect(401);
  expect(accessLines().at(-1)).toMatchObject({ status: 401, reason: (denied.body as { message: string }).message });
  const missing = await request(t.app).get('/devices/AA:BB:CC:DD:EE:FF').set('Authorization', `Bearer ${keys.ana}`).expect(404);
  expect(accessLines().at(-1)).toMatchObject({ route: '/devices/:id', status: 404, reason: (missing.body as { message: string }).message });
  await request(t.app).get('/v1/me').set('X-API-Key', keys.ana).expect(200);
  expect(accessLines().at(-1)).not.toHaveProperty('reason');
  expect(lines.join('\n')).not.toContain('sk_wrong_0123456789abcdef');
});

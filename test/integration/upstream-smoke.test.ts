import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { catalog, keys, menuIds } from '../fixtures/catalog.js';

let upstream: FakeUpstream;
let t: TestApp;
beforeAll(async () => {
  upstream = await new FakeUpstream(catalog()).start();
  t = await buildTestApp({ env: { DEVICE_API_URL: upstream.baseUrl, MENU_API_URL: upstream.baseUrl } });
});
afterAll(async () => {
  await t.close();
  await upstream.stop();
});

test('device list and menu options come from the upstream with the key forwarded', async () => {
  const res = await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).set('X-Request-Id', 'req-1').expect(200);
  expect(res.body.total).toBe(4);
  expect(upstream.callsTo('/devices')[0]).toMatchObject({ authorization: `Bearer ${keys.ana}`, requestId: 'req-1' });
  const groups = await request(t.app).get(`/v1/menus/${menuIds.allDay}/groups/options`).set('X-API-Key', keys.ana).expect(200);
  expect(groups.body[1]).toEqual(['Drinks › Hot drinks', expect.any(String)]);
  expect(upstream.callsTo('/v1/groups')[0]?.apiKey).toBe(keys.ana);
});

test('a key the upstream rejects counts as a failed attempt of the client, with the Bearer challenge', async () => {
  upstream.reset();
  for (let i = 0; i < 20; i += 1) {
    const res = await request(t.app)
      .get('/devices')
      .set('Authorization', `Bearer sk_guess_${String(i).padStart(12, '0')}`)
      .expect(401);
    expect(res.headers['www-authenticate']).toBe('Bearer');
  }
  expect(upstream.callsTo('/devices')).toHaveLength(20);
  const blocked = await request(t.app).get('/devices').set('Authorization', `Bearer sk_guess_999999999999`).expect(429);
  expect(blocked.body).toEqual({ message: 'Too many requests' });
  expect(upstream.callsTo('/devices')).toHaveLength(20);
});

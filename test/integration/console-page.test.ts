import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';

// GET /console (docs/console.md): served with no key and a policy allowing only this origin.
// The built page itself is driven in a real browser by `npm run test:browser`; here the page
// may or may not be built (a fresh clone's `npm test` builds nothing), so either answer is
// checked for its headers.

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('GET /console', () => {
  test.each(['/console', '/console/devices', '/console/dropdowns', '/console/webhooks', '/console/operator'])(
    '%s: the page with its policy, no key needed',
    async (path) => {
      const res = await request(t.app).get(path);
      expect([200, 503]).toContain(res.status);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.headers['content-security-policy']).toBe(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
      );
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      expect(res.headers['cache-control']).toBe('no-cache');
      if (res.status === 503) expect(res.text).toContain('npm run build');
    },
  );

  test('other paths under /console, other methods and source maps are 404s', async () => {
    await request(t.app).get('/console/settings').expect(404, { message: 'Not found' });
    await request(t.app).post('/console').expect(404);
    await request(t.app).get('/console/assets/index.js.map').expect(404);
    await request(t.app).get('/console/assets/../../src/main.js').expect(404);
  });
});

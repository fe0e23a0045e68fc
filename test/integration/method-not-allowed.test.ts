import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { routes } from '../../src/http/routes/index.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * A known path asked with a method it does not have is a 405 `Method not allowed` whose
 * `Allow` lists the path's methods, taken from the route declarations (docs/api.md, Errors);
 * an unknown path stays a 404.
 */

let t: TestApp;

beforeAll(async () => {
  // The operator API answers only where ADMIN_TOKEN is set (everything under /admin is 404 otherwise).
  t = await buildTestApp({ dataset: catalog(), env: { ADMIN_TOKEN: 'method-test-admin-token-0123456789abcdef' } });
});

afterAll(async () => {
  await t.close();
});

/** The methods each declared path pattern answers, as Allow lists them. */
function declaredAllow(): Map<string, string> {
  const byPath = new Map<string, Set<string>>();
  for (const route of routes(t.services.manifest, t.services.targets)) {
    const methods = byPath.get(route.path) ?? new Set<string>();
    methods.add(route.method.toUpperCase());
    if (route.method === 'get') methods.add('HEAD');
    byPath.set(route.path, methods);
  }
  return new Map([...byPath].map(([path, methods]) => [path, [...methods].sort().join(', ')]));
}

/** A concrete path for a pattern (`{id}` → a made-up id). */
const concrete = (path: string) => path.replace(/\{[A-Za-z0-9_]+\}/g, 'some-id');

describe('405 Method not allowed', () => {
  test('a known path with another method: 405, the JSON message and Allow, before any key is asked for', async () => {
    const res = await request(t.app).post('/v1/menus').expect(405);
    expect(res.body).toEqual({ message: 'Method not allowed' });
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.headers['content-type']).toMatch(/^application\/json/);
  });

  test('every declared path, asked with a method none of its routes has, lists exactly its declared methods', async () => {
    const allow = declaredAllow();
    expect(allow.get('/v1/hooks')).toBe('GET, HEAD, POST');
    expect(allow.get('/v1/hooks/{id}')).toBe('DELETE, GET, HEAD, PATCH');
    for (const [path, methods] of allow) {
      const unused = ['PUT', 'PATCH', 'DELETE', 'POST'].find((m) => !methods.split(', ').includes(m))!;
      const res = await request(t.app)[unused.toLowerCase() as 'put'](concrete(path)).set('X-API-Key', keys.ana);
      expect({ path, status: res.status, allow: res.headers.allow, body: res.body }).toEqual({
        path,
        status: 405,
        allow: methods,
        body: { message: 'Method not allowed' },
      });
    }
  });

  test('OPTIONS on a known path: 200 with the same Allow, on the hot dropdown routes too', async () => {
    expect((await request(t.app).options('/v1/hooks').expect(200)).headers.allow).toBe('GET, HEAD, POST');
    expect((await request(t.app).options('/v1/menus/options').expect(200)).headers.allow).toBe('GET, HEAD');
  });

  test('declared methods still answer as before, and unknown paths stay 404', async () => {
    await request(t.app).get('/v1/menus').set('X-API-Key', keys.ana).expect(200);
    await request(t.app).head('/healthz').expect(200);
    await request(t.app).delete('/v1/hooks/nope').set('X-API-Key', keys.ana).expect(404, { message: 'Hook not found' });
    await request(t.app).post('/v1/nothing-here').expect(404, { message: 'Not found' });
    await request(t.app).put('/devices/a/b').expect(404, { message: 'Not found' });
  });
});

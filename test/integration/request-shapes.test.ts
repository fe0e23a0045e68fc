import { afterAll, afterEach, beforeAll, expect, test } from '@jest/globals';
import { IncomingMessage, ServerResponse } from 'node:http';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys, menuIds } from '../fixtures/catalog.js';

/**
 * src/app.ts (`keepShapes`): Express gives each request and response the app's prototypes
 * before routing them, and every property first added to them after that costs a new hidden
 * class on V8 (2 to 4 µs each, bench row 1). A warm dropdown, a keyed route and a 404 must add
 * none after the swap, except the router's own tracing symbols, which it keeps private.
 */

let t: TestApp;
const swapped = new Map<object, Set<PropertyKey>>();
const setPrototypeOf = Object.setPrototypeOf;

beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog() });
  // What each request and response held when Express swapped its prototype.
  Object.setPrototypeOf = (target: object, proto: object | null) => {
    if (target instanceof IncomingMessage || target instanceof ServerResponse) swapped.set(target, new Set(Reflect.ownKeys(target)));
    return setPrototypeOf(target, proto) as object;
  };
});
afterEach(() => swapped.clear());
afterAll(async () => {
  Object.setPrototypeOf = setPrototypeOf;
  await t.close();
});

/** The properties each swapped request and response gained after the swap, by the end of its answer. */
function addedAfterSwap(): string[] {
  const added = new Set<string>();
  for (const [target, before] of swapped) {
    for (const key of Reflect.ownKeys(target)) if (!before.has(key)) added.add(`${target instanceof IncomingMessage ? 'req' : 'res'}.${String(key)}`);
  }
  return [...added].sort();
}

/** The router's private symbols (`router.tracing.*`): out of the app's reach. */
const ours = (key: string) => !key.startsWith('req.Symbol(router.tracing.');

test('a warm dropdown adds no property to its request or response after the prototype swap', async () => {
  const path = `/v1/menus/${menuIds.allDay}/groups/options`;
  await request(t.app).get(path).set('X-API-Key', keys.ana).expect(200);
  swapped.clear();
  const res = await request(t.app).get(path).set('X-API-Key', keys.ana).expect(200);
  expect(res.headers['x-cache']).toBe('HIT');
  expect(res.headers['ratelimit-policy']).toBeDefined();
  expect(swapped.size).toBe(2);
  expect(addedAfterSwap().filter(ours)).toEqual([]);
});

test('nor does a keyed route of the nested router, or an unknown path', async () => {
  await request(t.app).get('/v1/me').set('X-API-Key', keys.ana).expect(200);
  await request(t.app).get('/no/such/path').expect(404);
  expect(swapped.size).toBe(4);
  expect(addedAfterSwap().filter(ours)).toEqual([]);
});

'use strict';

/**
 * Every request goes to the connection's base_url: the app runs against a reverse proxy on a
 * loopback port that serves the connector under a path prefix (`http://127.0.0.1:<port>/signage/`,
 * trailing slash included), as a connector behind a company's proxy would be. The proxy
 * records each request; every kind of call the app makes must show up there, and none may
 * reach the proxy outside the prefix.
 */

const http = require('http');
const { afterAll, beforeAll, describe, expect, test } = require('@jest/globals');
const { App, appTester, authData, baseUrl, definition, hookOperation, operation, searchOperation, testTargetUrl } = require('./harness');

const prefix = '/signage';
const targetUrl = testTargetUrl;

/** @type {http.Server} */
let proxy;
/** @type {string[]} `GET /v1/me`, as the connector saw it (prefix removed) */
const seen = [];
/** @type {string[]} requests outside the prefix */
const stray = [];

beforeAll(async () => {
  proxy = http.createServer((req, res) => {
    const url = String(req.url);
    if (!url.startsWith(`${prefix}/`)) {
      stray.push(`${req.method} ${url}`);
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"not under the prefix"}');
      return;
    }
    /** @type {Buffer[]} */
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', async () => {
      const path = url.slice(prefix.length);
      seen.push(`${req.method} ${path}`);
      /** @type {Record<string, string>} */
      const headers = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === 'string' && !['host', 'connection', 'content-length', 'accept-encoding'].includes(name)) headers[name] = value;
      }
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      try {
        const answer = await fetch(`${baseUrl}${path}`, { method: req.method, headers, body });
        const text = await answer.text();
        /** @type {Record<string, string>} */
        const out = { 'content-type': answer.headers.get('content-type') || 'application/json' };
        const link = answer.headers.get('link');
        // The connector links to itself; behind a proxy the link names the proxy's address.
        if (link) out.link = link.split(baseUrl).join(`${proxyUrl()}${prefix}`);
        res.writeHead(answer.status, out).end(text);
      } catch (err) {
        res.writeHead(502, { 'content-type': 'application/json' }).end(JSON.stringify({ message: String(err) }));
      }
    });
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', () => resolve(undefined)));
});

afterAll(() => new Promise((resolve) => proxy.close(() => resolve(undefined))));

const proxyUrl = () => `http://127.0.0.1:${/** @type {import('net').AddressInfo} */ (proxy.address()).port}`;

/**
 * A bundle whose connection points at the proxy.
 * @param {Record<string, unknown>} [extra]
 */
const viaProxy = (extra = {}) => ({ authData: { ...authData, base_url: `${proxyUrl()}${prefix}/` }, inputData: {}, meta: {}, ...extra });

/**
 * `GET /devices/{device_id}` → a pattern for the request line without its query.
 * @param {string} method
 * @param {string} path
 */
const requestLine = (method, path) => new RegExp(`^${method} ${path.replace(/\{[^}]+\}/g, '[^/?]+')}(\\?|$)`);

/**
 * Runs one call and returns the requests the proxy saw during it.
 * @param {() => Promise<unknown>} call
 */
const requestsOf = async (call) => {
  const from = seen.length;
  const result = await call();
  return { result, requests: seen.slice(from) };
};

describe('the connection’s base_url', () => {
  test('the auth test', async () => {
    const { requests } = await requestsOf(() => appTester(App.authentication.test, viaProxy()));
    expect(requests).toEqual([`${definition.authentication.test.method} ${definition.authentication.test.path}`]);
  });

  test('every dropdown, and its "load more" pages found by following the cursors', async () => {
    const menus = /** @type {Array<{id: string}>} */ ((await requestsOf(() => appTester(operation('menus_list').perform, viaProxy()))).result);
    /** @type {Record<string, unknown>} */
    const inputData = { menu_id: menus[0] ? menus[0].id : undefined };
    for (const spec of definition.optionTriggers) {
      const first = await requestsOf(() => appTester(operation(spec.key).perform, viaProxy({ inputData })));
      expect(first.requests.length).toBe(1);
      expect(first.requests[0]).toMatch(requestLine('GET', spec.path));
      expect(first.requests[0]).toMatch(/[?&]format=objects/);
      // Page 1 without a stored cursor: page 0 again, then the page its cursor names.
      const second = await requestsOf(() => appTester(operation(spec.key).perform, viaProxy({ inputData, meta: { page: 1 } })));
      expect(second.requests.length).toBeGreaterThanOrEqual(1);
      if (second.requests.length > 1) expect(second.requests[1]).toMatch(/[?&]cursor=/);
    }
  });

  test('every search', async () => {
    const devices = /** @type {Array<{id: string}>} */ (await appTester(operation('devices_list').perform, viaProxy()));
    const menus = /** @type {Array<{id: string}>} */ (await appTester(operation('menus_list').perform, viaProxy()));
    const menuId = menus[0] ? menus[0].id : '';
    const groups = /** @type {Array<{id: string}>} */ (await appTester(operation('menu_groups_list').perform, viaProxy({ inputData: { menu_id: menuId } })));
    /** @type {Record<string, unknown>} */
    const values = { device_id: devices[0] ? devices[0].id : '', menu_id: menuId, group_id: groups[0] ? groups[0].id : '' };
    for (const spec of definition.searches) {
      /** @type {Record<string, unknown>} */
      const inputData = {};
      for (const input of spec.inputs) if (input.required) inputData[input.key] = values[input.key];
      const { result, requests } = await requestsOf(() => appTester(searchOperation(spec.key).perform, viaProxy({ inputData })));
      expect(Array.isArray(result)).toBe(true);
      expect(requests.length).toBeGreaterThanOrEqual(1);
      for (const request of requests) expect(request).toMatch(requestLine(spec.request.method, spec.request.path));
    }
  });

  test('every polling trigger', async () => {
    for (const spec of definition.pollingTriggers) {
      const { requests } = await requestsOf(() => appTester(operation(spec.key).perform, viaProxy()));
      expect(requests.map((request) => request.split('?')[0])).toEqual([`${spec.polling.method} ${spec.polling.path}`]);
      // The Zap editor's test, with samples from the user's own devices when nothing happened yet.
      const sampled = await requestsOf(() => appTester(operation(spec.key).perform, viaProxy({ meta: { isLoadingSample: true } })));
      expect(sampled.requests.length).toBeGreaterThanOrEqual(1);
      const paths = [`${spec.polling.method} ${spec.polling.path}`, `${spec.samples.method} ${spec.samples.path}`];
      for (const request of sampled.requests) expect(paths).toContain(request.split('?')[0]);
    }
  });

  test('every REST hook: subscribe, load samples, unsubscribe', async () => {
    for (const spec of definition.hookTriggers) {
      const trigger = hookOperation(spec.key);
      const subscribed = await requestsOf(() => appTester(trigger.performSubscribe, viaProxy({ targetUrl })));
      const hook = /** @type {{id: string}} */ (subscribed.result);
      try {
        expect(subscribed.requests).toEqual([`${spec.subscribe.method} ${spec.subscribe.path}`]);
        const listed = await requestsOf(() => appTester(trigger.performList, viaProxy()));
        expect(listed.requests.length).toBeGreaterThanOrEqual(1);
        expect(listed.requests[0] && listed.requests[0].split('?')[0]).toBe(`${spec.list.method} ${spec.list.path}`);
      } finally {
        const removed = await requestsOf(() => appTester(trigger.performUnsubscribe, viaProxy({ subscribeData: hook })));
        expect(removed.requests).toEqual([`${spec.unsubscribe.method} ${spec.unsubscribe.path.replace(/\{id\}/, encodeURIComponent(hook.id))}`]);
      }
    }
  });

  test('no request reached the proxy outside the base URL’s path', () => {
    expect(stray).toEqual([]);
  });
});

'use strict';

const http = require('http');
const { afterAll, beforeAll, describe, expect, test } = require('@jest/globals');
const harness = require('./harness');

const { appTester, authData, definition } = harness;
/** @type {any} the app's triggers and searches by key, whatever their kind */
const App = harness.App;

// A server on a local port that answers 200 badly (what a proxy or a broken deployment in front
// of the connector may do), or never: every call of the app must then fail with a clear error,
// never return an empty list or the bad object. CONNECTOR_TIMEOUT_MS shortens the 30 s bound
// while the server never answers; a bad answer comes at once, and gets a generous bound, so a
// busy machine is not mistaken for a hanging server.

const timeoutMs = 400;
const generousMs = 8_000;
/** @type {Record<string, {body: string, contains: RegExp}>} */
const answers = {
  'invalid JSON': { body: '{"id": "a4:83', contains: /not valid JSON/ },
  'an object where something else belongs': { body: '{"unexpected": true}', contains: /unexpected answer .*expected/ },
  'a list of records without ids': { body: '[{"name": "Front counter"}]', contains: /unexpected answer .*expected/ },
};

/** @type {http.Server} */
let server;
/** @type {string} */
let badBase;
/** @type {string} what the server answers now: a key of `answers`, or 'hang' */
let mode = 'hang';
/** @type {Set<import('http').ServerResponse>} */
const hanging = new Set();

beforeAll(async () => {
  process.env.CONNECTOR_TIMEOUT_MS = String(generousMs);
  server = http.createServer((req, res) => {
    req.resume();
    if (mode === 'hang') {
      hanging.add(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(/** @type {{body: string}} */ (answers[mode]).body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
  badBase = `http://127.0.0.1:${/** @type {import('net').AddressInfo} */ (server.address()).port}`;
});

afterAll(async () => {
  delete process.env.CONNECTOR_TIMEOUT_MS;
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(() => resolve(undefined)));
});

/** Every value an input might need, so each call reaches the server. */
const inputData = { menu_id: 'menu-1', menuId: 'menu-1', group_id: 'group-1', device_id: 'a4:83:e7:1f:2b:01' };
const bundle = () => ({ authData: { ...authData, base_url: badBase }, inputData: { ...inputData }, meta: {}, targetUrl: 'https://example.com/hook' });

/** @type {Array<[string, any]>} each call of the app that reads an answer */
const calls = [
  ['the auth test', App.authentication.test],
  ...definition.optionTriggers.map((spec) => /** @type {[string, any]} */ ([`dropdown ${spec.key}`, App.triggers[spec.key].operation.perform])),
  ...definition.searches.map((spec) => /** @type {[string, any]} */ ([`search ${spec.key}`, App.searches[spec.key].operation.perform])),
  ...definition.pollingTriggers.map((spec) => /** @type {[string, any]} */ ([`polling trigger ${spec.key}`, App.triggers[spec.key].operation.perform])),
  ...definition.hookTriggers.map((spec) => /** @type {[string, any]} */ ([`subscribing ${spec.key}`, App.triggers[spec.key].operation.performSubscribe])),
  ...definition.hookTriggers.map((spec) => /** @type {[string, any]} */ ([`samples of ${spec.key}`, App.triggers[spec.key].operation.performList])),
];

describe.each(Object.keys(answers))('a 200 with %s', (answer) => {
  test.each(calls)('fails %s with a clear error', async (_name, method) => {
    mode = answer;
    process.env.CONNECTOR_TIMEOUT_MS = String(generousMs);
    await expect(appTester(method, bundle())).rejects.toThrow(/** @type {{contains: RegExp}} */ (answers[answer]).contains);
  });
});

describe('a connector that never answers', () => {
  test.each(calls)('fails %s once CONNECTOR_TIMEOUT_MS has passed', async (_name, method) => {
    mode = 'hang';
    process.env.CONNECTOR_TIMEOUT_MS = String(timeoutMs);
    const started = Date.now();
    await expect(appTester(method, bundle())).rejects.toThrow(new RegExp(`no answer from the connector within ${timeoutMs / 1000} s`));
    // Generous: only shows the bound is the one set, not Zapier's own much longer one.
    expect(Date.now() - started).toBeLessThan(20_000);
  });
});

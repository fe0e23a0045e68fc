import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { attach, loadApp, MakeError, runModule, runRpc, testConnection } from './make.js';

// A server on a local port that answers 200 badly (what a proxy or a broken deployment in front
// of the connector may do), or never: the connection, every RPC, search, polling trigger and
// webhook attach must then fail with a clear error (Make's `response.type`, `response.valid`
// and `timeout` directives), never give no bundles or a bad one. CONNECTOR_TIMEOUT_MS stands in
// for the app's 30 s `timeout` here, so the test need not wait that long.

const timeoutMs = 400;
// A bad answer comes at once and gets a generous bound, so a busy machine is not mistaken for a
// server that never answers.
const generousMs = 15_000;
const answers = {
  'invalid JSON': { body: '{"id": "a4:83', error: /Source is not valid JSON/ },
  'an object where something else belongs': { body: '{"unexpected": true}', error: /^Unexpected answer from the connector to .*: expected / },
  'a list of records without ids': { body: '[{"name": "Front counter"}]', error: /^Unexpected answer from the connector to .*: expected / },
};

const app = loadApp();
let server;
let connection;
let mode = 'hang';
const hanging = new Set();

before(async () => {
  process.env.CONNECTOR_TIMEOUT_MS = String(generousMs);
  server = createServer((req, res) => {
    req.resume();
    if (mode === 'hang') {
      hanging.add(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(answers[mode].body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  connection = { base_url: `http://127.0.0.1:${server.address().port}`, api_key: 'sk_make_app_test_bad_answers_0000' };
});

after(async () => {
  delete process.env.CONNECTOR_TIMEOUT_MS;
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Every value a parameter might need, so that each request reaches the server. */
const parameters = { menu_id: 'menu-1', group_id: 'group-1', device_id: 'a4:83:e7:1f:2b:01' };

/** Each request of the app whose answer it reads, by name. */
const calls = () => [
  ['the connection', () => testConnection(app, connection)],
  ...Object.keys(app.rpc).map((name) => [`RPC ${name}`, () => runRpc(app, name, parameters, connection)]),
  ...Object.keys(app.module).filter((name) => app.module[name].communication.url).map((name) => [`module ${name}`, () => runModule(app, name, parameters, connection)]),
  ...Object.keys(app.webhook).map((name) => [`attaching ${name}`, () => attach(app, name, 'https://example.com/make-webhook', {}, connection)]),
];

test('the base waits 30 s at most and parses JSON (Make allows `timeout` in the base only); the connection, every RPC, module and attach checks the answer', () => {
  assert.equal(app.base.timeout, 30_000);
  assert.equal(app.base.response.type, 'json');
  const [connectionComponent] = Object.values(app.connection);
  const responses = [
    connectionComponent.communication.response,
    ...Object.values(app.rpc).map((rpc) => rpc.communication.response),
    ...Object.values(app.module).filter((module) => module.communication.url).map((module) => module.communication.response),
    ...Object.values(app.webhook).map((webhook) => webhook.attach.response),
  ];
  for (const response of responses) {
    assert.match(response.valid.condition, /^\{\{.+\}\}$/);
    assert.match(response.valid.message, /^Unexpected answer from the connector/);
    assert.equal(response.valid.type, 'DataError');
  }
});

for (const [answer, { error }] of Object.entries(answers)) {
  describe(`a 200 with ${answer}`, () => {
    test('fails every request with a clear error', async () => {
      mode = answer;
      process.env.CONNECTOR_TIMEOUT_MS = String(generousMs);
      for (const [name, call] of calls()) {
        await assert.rejects(call(), (err) => {
          assert.ok(err instanceof MakeError, `${name}: ${err}`);
          assert.equal(err.type, 'DataError', name);
          assert.match(err.message, error, name);
          return true;
        });
      }
    });
  });
}

describe('a connector that never answers', () => {
  test('fails every request once the timeout has passed', async () => {
    mode = 'hang';
    process.env.CONNECTOR_TIMEOUT_MS = String(timeoutMs);
    for (const [name, call] of calls()) {
      const started = Date.now();
      await assert.rejects(call(), (err) => {
        assert.ok(err instanceof MakeError, `${name}: ${err}`);
        assert.equal(err.type, 'ConnectionError', name);
        return true;
      });
      // Generous: only shows the bound is the one set.
      assert.ok(Date.now() - started < 20_000, `${name} took ${Date.now() - started} ms`);
    }
  });
});

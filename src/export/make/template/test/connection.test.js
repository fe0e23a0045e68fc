import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { connectorGet, env, loadApp, MakeError, requireConnector, testConnection } from './make.js';

// Creating a connection in Make: the connection's communication with the user's base URL and
// key; the label is the account name, a wrong key is refused with the connector's message.

describe('connection', () => {
  let app;
  before(() => {
    requireConnector();
    app = loadApp();
  });

  test('a valid key creates the connection, labelled with the account name', async () => {
    const me = await connectorGet('/v1/me');
    const { label } = await testConnection(app, { base_url: env.baseUrl, api_key: env.apiKey });
    assert.equal(label, me.account.name);
  });

  test('a wrong key is refused with the connector message', async () => {
    await assert.rejects(testConnection(app, { base_url: env.baseUrl, api_key: 'sk_make_app_test_not_a_key_00000' }), (err) => {
      assert.ok(err instanceof MakeError);
      assert.equal(err.statusCode, 401);
      assert.match(err.message, /^\[401\] \S/);
      return true;
    });
  });
});

'use strict';

const { describe, expect, test } = require('@jest/globals');
const { App, appTester, authData, bundle, connectorGet, definition } = require('./harness');

describe('authentication', () => {
  test('the connection has the fields base_url (default: the base URL given at export) and api_key (a password)', () => {
    const fields = App.authentication.fields.map((/** @type {Record<string, unknown>} */ field) => ({ key: field.key, type: field.type, required: field.required }));
    expect(fields).toEqual([
      { key: 'base_url', type: 'string', required: true },
      { key: 'api_key', type: 'password', required: true },
    ]);
    const baseUrl = definition.authentication.fields.find((field) => field.key === 'base_url');
    expect(baseUrl && baseUrl.default).toMatch(/^https?:\/\/[^/]/);
  });

  test('the key passes the auth test and the connection is named after its account', async () => {
    const answer = await appTester(App.authentication.test, bundle());
    expect(answer).toEqual(expect.objectContaining({ key: expect.any(Object) }));
    const me = await connectorGet('/v1/me');
    expect(me.status).toBe(200);
    const label = await appTester(App.authentication.connectionLabel, bundle({ inputData: answer }));
    expect(label).toBe(me.body.account.name);
  });

  test('a base URL with a trailing slash works the same', async () => {
    const answer = await appTester(App.authentication.test, bundle({ authData: { ...authData, base_url: `${authData.base_url}/` } }));
    expect(answer).toEqual(expect.objectContaining({ key: expect.any(Object) }));
  });

  test('a wrong key fails the auth test with the connector message', async () => {
    const wrong = bundle({ authData: { ...authData, api_key: 'sk_zapier_app_test_not_a_key_0000' } });
    await expect(appTester(App.authentication.test, wrong)).rejects.toThrow(/HTTP 401/);
  });

  test('a missing or unusable base URL fails the auth test and says so', async () => {
    const withBase = (/** @type {string} */ base_url) => bundle({ authData: { ...authData, base_url } });
    await expect(appTester(App.authentication.test, withBase(''))).rejects.toThrow(/no base URL; reconnect/);
    await expect(appTester(App.authentication.test, withBase('connector.example.com'))).rejects.toThrow(/is not a URL/);
    await expect(appTester(App.authentication.test, withBase('ftp://connector.example.com'))).rejects.toThrow(/must be an http:\/\/ or https:\/\/ URL/);
  });
});

'use strict';

const { describe, expect, test } = require('@jest/globals');
const { App, appTester, bundle } = require('./harness');

describe('authentication', () => {
  test('the key passes the auth test and the connection gets a label', async () => {
    const answer = await appTester(App.authentication.test, bundle());
    expect(answer).toEqual(expect.objectContaining({ key: expect.any(Object) }));
    const label = await appTester(App.authentication.connectionLabel, bundle({ inputData: answer }));
    expect(label).toEqual(expect.any(String));
    expect(label).not.toBe('');
  });

  test('a wrong key fails the auth test with the connector message', async () => {
    const wrong = bundle({ authData: { api_key: 'sk_zapier_app_test_not_a_key_0000' } });
    await expect(appTester(App.authentication.test, wrong)).rejects.toThrow(/HTTP 401/);
  });
});

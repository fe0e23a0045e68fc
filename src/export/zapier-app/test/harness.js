'use strict';

/**
 * What every test file of the app shares: the app under zapier-platform-core's app tester,
 * and a bundle carrying the key. The tests call a running connector: CONNECTOR_BASE_URL
 * (default: the base URL given at export) and CONNECTOR_API_KEY, from the environment or a
 * `.env` file in this folder.
 */

const zapier = require('zapier-platform-core');
const App = require('../index');
const definition = require('../definition.json');

zapier.tools.env.inject();

const apiKey = process.env.CONNECTOR_API_KEY;
if (!apiKey) {
  const baseUrl = process.env.CONNECTOR_BASE_URL || definition.connector.defaultBaseUrl;
  throw new Error(`Set CONNECTOR_API_KEY (in the environment or a .env file) to a key of the connector at ${baseUrl}; see README.md.`);
}

const appTester = zapier.createAppTester(App);

/**
 * A bundle as Zapier builds it, with the connection's key.
 * @param {Record<string, unknown>} [extra]
 */
const bundle = (extra = {}) => ({ authData: { api_key: String(apiKey) }, inputData: {}, meta: {}, ...extra });

/**
 * A trigger's operation by key.
 * @param {string} key
 */
const operation = (key) => {
  const trigger = App.triggers[key];
  if (!trigger) throw new Error(`the app has no trigger ${key}`);
  return trigger.operation;
};

/**
 * A REST-hook trigger's operation by key.
 * @param {string} key
 */
const hookOperation = (key) => {
  const found = operation(key);
  if (!('performSubscribe' in found)) throw new Error(`${key} is not a REST-hook trigger`);
  return found;
};

module.exports = { App, appTester, bundle, definition, hookOperation, operation };

'use strict';

/**
 * What every test file of the app shares: the app under zapier-platform-core's app tester,
 * a bundle carrying the connection (`base_url` and `api_key`), and direct calls to the
 * connector to compare with. The tests call a running connector: CONNECTOR_BASE_URL (the
 * connection's `base_url`; default: the base URL given at export) and CONNECTOR_API_KEY,
 * from the environment or a `.env` file in this folder.
 */

const http = require('http');
const zapier = require('zapier-platform-core');
const App = require('../index');
const definition = require('../definition.json');

zapier.tools.env.inject();

/** The default of the connection's `base_url` field: the base URL given at export. */
const baseUrlField = definition.authentication.fields.find((field) => field.key === 'base_url');
const exportBaseUrl = String((baseUrlField && baseUrlField.default) || '');
/** The connector under test, as the connection's `base_url`. */
const baseUrl = String(process.env.CONNECTOR_BASE_URL || exportBaseUrl).replace(/\/+$/, '');

const apiKey = process.env.CONNECTOR_API_KEY;
if (!apiKey) {
  throw new Error(`Set CONNECTOR_API_KEY (in the environment or a .env file) to a key of the connector at ${baseUrl}; see README.md.`);
}

/**
 * Where the tests' hook subscriptions point (TEST_TARGET_URL). The default is a public https
 * address written as an IP literal, which the connector accepts under its default rules
 * without a DNS look-up, so the tests also run on a machine without DNS. Each subscription is
 * removed at once and the tests sign their deliveries themselves: nothing is sent there.
 */
const testTargetUrl = process.env.TEST_TARGET_URL || 'https://1.1.1.1/zapier-app-test';

const appTester = zapier.createAppTester(App);

/**
 * The handler Zapier runs an app with (exported by zapier-platform-core, not in its types).
 * @type {(app: unknown) => (event: Record<string, unknown>) => Promise<{results: unknown}>}
 */
const createAppHandler = /** @type {any} */ (zapier).createAppHandler;

/**
 * Zapier's RPC endpoint as far as z.cursor uses it, on a loopback port: `get_cursor` and
 * `set_cursor` keep one string per store key (on Zapier, one dropdown's paging). The core's
 * own in-memory stand-in for tests (`cursorTestObj`) files a cursor under the cursor's value
 * instead of the store key, so `z.cursor.get()` never returns what was set; this one answers
 * as the RPC does. An invocation that carries a token also streams its log to Zapier's log
 * endpoint; LOGGING_ENDPOINT points that here too, where it is read and dropped.
 */
const cursorRpc = {
  /** @type {import('http').Server | null} */
  server: null,
  /** @type {Map<string, string>} */
  stores: new Map(),
  /** @returns {Promise<string>} the URL to give as the event's rpc_base */
  async url() {
    if (!this.server) {
      const server = http.createServer((req, res) => {
        let text = '';
        req.on('data', (chunk) => (text += chunk));
        req.on('end', () => {
          if (req.url !== '/rpc') {
            res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end('{}');
            return;
          }
          const call = JSON.parse(text || '{}');
          const params = Array.isArray(call.params) ? call.params : [];
          let result = null;
          if (call.method === 'get_cursor') result = this.stores.get(String(call.storeKey)) ?? null;
          else if (call.method === 'set_cursor') this.stores.set(String(call.storeKey), String(params[0]));
          const answer = ['get_cursor', 'set_cursor'].includes(call.method) ? { id: call.id, result } : { id: call.id, error: `unexpected RPC ${call.method}` };
          res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }).end(JSON.stringify(answer));
        });
      });
      await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
      server.unref();
      this.server = server;
      const address = /** @type {import('net').AddressInfo} */ (server.address());
      process.env.LOGGING_ENDPOINT = `http://127.0.0.1:${address.port}/log`;
    }
    const address = /** @type {import('net').AddressInfo} */ (this.server.address());
    return `http://127.0.0.1:${address.port}/rpc`;
  },
  async close() {
    const server = this.server;
    this.server = null;
    if (server) await new Promise((resolve) => server.close(() => resolve(undefined)));
  },
};

/**
 * Runs a dropdown trigger's pages as the Zap editor does (page 0, then "load more"): through
 * zapier-platform-core's own handler (what Zapier runs), with a store key and the RPC above
 * behind z.cursor. One pager is one dropdown: its pages share the store key.
 * @param {string} key the trigger's key
 */
const pager = (key) => {
  const handler = createAppHandler(App);
  const storeKey = `test-${key}-${Math.random().toString(36).slice(2)}`;
  return {
    /** What z.cursor holds for this dropdown now. */
    stored: () => cursorRpc.stores.get(storeKey),
    /**
     * @param {number} page
     * @param {Record<string, unknown>} [inputData]
     * @returns {Promise<any>}
     */
    page: async (page, inputData = {}) => {
      const event = {
        command: 'execute',
        method: `triggers.${key}.operation.perform`,
        bundle: bundle({ inputData, meta: { page, isFillingDynamicDropdown: true } }),
        storeKey,
        rpc_base: await cursorRpc.url(),
        token: 'test-token',
      };
      const response = await handler(event);
      return response.results;
    },
  };
};

/**
 * GET on the connector with the test key, as a client that does not go through the app.
 * @param {string} path with its query
 * @param {{bearer?: boolean}} [options] the device area reads the key from Authorization: Bearer
 * @returns {Promise<{status: number, body: any, headers: Headers}>}
 */
const connectorGet = async (path, options = {}) => {
  const headers = options.bearer ? { Authorization: `Bearer ${apiKey}` } : { [definition.connector.apiKeyHeader]: String(apiKey) };
  const response = await fetch(`${baseUrl}${path}`, { headers });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
};

/** The connection's fields, as Zapier keeps them: the connector's base URL and the key. */
const authData = { base_url: baseUrl, api_key: String(apiKey) };

/**
 * A bundle as Zapier builds it, with the connection.
 * @param {Record<string, unknown>} [extra]
 */
const bundle = (extra = {}) => ({ authData: { ...authData }, inputData: {}, meta: {}, ...extra });

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
 * A search's operation by key.
 * @param {string} key
 */
const searchOperation = (key) => {
  const found = App.searches && App.searches[key];
  if (!found) throw new Error(`the app has no search ${key}`);
  return found.operation;
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

module.exports = { App, appTester, authData, baseUrl, bundle, connectorGet, cursorRpc, definition, hookOperation, operation, pager, searchOperation, testTargetUrl };

'use strict';

/**
 * One real status change, seen both ways: the connector delivers it to a REST hook (received
 * here by a local receiver, then handed to the hook trigger's perform as Zapier hands a
 * delivery over) and lists it for the polling trigger. Both must emit the very same item.
 *
 * The status change is made with the connector's test control (CONNECTOR_CONTROL_URL, which
 * `npm run test:platforms` starts: POST /devices/{id}/offline|online). The connector must be
 * allowed to deliver to a loopback URL (WEBHOOK_ALLOWED_TARGETS or
 * WEBHOOK_ALLOW_PRIVATE_TARGETS). Without a control URL the test is skipped.
 */

const http = require('http');
const { afterAll, beforeAll, describe, expect, test } = require('@jest/globals');
const { appTester, bundle, definition, hookOperation, operation } = require('./harness');

const controlUrl = process.env.CONNECTOR_CONTROL_URL;
const run = controlUrl ? test : test.skip;
if (!controlUrl) console.warn('Skipped: the same item from the hook and the polling trigger needs CONNECTOR_CONTROL_URL (npm run test:platforms starts one).');

/** The control's action that makes an event of this type happen. */
/** @type {Record<string, string>} */
const actionFor = { 'device.offline': 'offline', 'device.online': 'online' };

/** @typedef {{path: string, headers: http.IncomingHttpHeaders, body: string}} Delivery */

/** A loopback receiver that keeps every POST and answers 204. */
const receiver = {
  /** @type {http.Server | null} */
  server: null,
  /** @type {Delivery[]} */
  received: [],
  url: '',
  async start() {
    const server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        this.received.push({ path: req.url || '', headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)));
    this.server = server;
    this.url = `http://127.0.0.1:${/** @type {import('net').AddressInfo} */ (server.address()).port}`;
  },
  async stop() {
    const server = this.server;
    this.server = null;
    if (server) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    }
  },
};

/**
 * Waits until `check` returns something other than undefined.
 * @template T
 * @param {string} what for the timeout message
 * @param {() => Promise<T | undefined> | T | undefined} check
 * @param {number} [timeoutMs]
 * @returns {Promise<T>}
 */
const waitFor = async (what, check, timeoutMs = 20_000) => {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

/**
 * @param {string} deviceId
 * @param {string} action
 */
const control = async (deviceId, action) => {
  const response = await fetch(`${controlUrl}/devices/${encodeURIComponent(deviceId)}/${action}`, { method: 'POST' });
  if (response.status !== 204) throw new Error(`the test control answered ${response.status} to ${action} for ${deviceId}`);
};

/**
 * What Zapier hands a hook trigger's perform for one delivery: the parsed body, and the raw
 * request with the headers renamed `Http-…`.
 * @param {Delivery} delivery
 */
const asZapierRequest = (delivery) => ({
  cleanedRequest: JSON.parse(delivery.body),
  rawRequest: {
    method: 'POST',
    querystring: '',
    headers: {
      'Content-Type': 'application/json',
      'Http-Webhook-Id': String(delivery.headers['webhook-id']),
      'Http-Webhook-Timestamp': String(delivery.headers['webhook-timestamp']),
      'Http-Webhook-Signature': String(delivery.headers['webhook-signature']),
    },
    content: delivery.body,
  },
});

// Each trigger with both kinds, in the order that makes its status change happen: a device
// goes offline first, then comes back.
const pairs = definition.hookTriggers
  .map((hook) => ({ hook, polling: definition.pollingTriggers.find((p) => p.key === `${hook.key}_polling`) }))
  .filter((pair) => pair.polling && pair.hook.eventTypes.some((type) => actionFor[type]))
  .sort((a, b) => Number(a.hook.eventTypes.includes('device.online')) - Number(b.hook.eventTypes.includes('device.online')));

describe('one status change: the REST-hook trigger and the polling trigger emit the same item', () => {
  /** @type {Array<{key: string, hook: {id: string, secret: string}}>} */
  const hooks = [];
  let deviceId = '';

  beforeAll(async () => {
    if (!controlUrl) return;
    await receiver.start();
    // A device of its own: the last one of the dropdown's first page.
    const choices = await appTester(operation('devices_list').perform, bundle());
    deviceId = String(choices[choices.length - 1].id);
    for (const { hook: spec } of pairs) {
      const hook = await appTester(hookOperation(spec.key).performSubscribe, bundle({ targetUrl: `${receiver.url}/${spec.key}`, inputData: { device_ids: [deviceId] } }));
      hooks.push({ key: spec.key, hook });
      // The polling trigger's first call enrols the key with the connector's poller.
      const polling = pairs.find((pair) => pair.hook.key === spec.key);
      if (polling && polling.polling) await appTester(operation(polling.polling.key).perform, bundle({ inputData: { device_ids: [deviceId] } }));
    }
    // The poller's first round for a key records a baseline; let it pass before anything changes.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
  }, 30_000);

  afterAll(async () => {
    for (const { key, hook } of hooks) await appTester(hookOperation(key).performUnsubscribe, bundle({ subscribeData: hook }));
    await receiver.stop();
  });

  for (const { hook: spec, polling } of pairs) {
    run(`${spec.key} and ${polling ? polling.key : ''}`, async () => {
      if (!polling) return;
      const type = spec.eventTypes.find((t) => actionFor[t]) || '';
      const subscribed = hooks.find((entry) => entry.key === spec.key);
      if (!subscribed) throw new Error(`${spec.key} was not subscribed`);

      await control(deviceId, actionFor[type] || '');
      const delivery = await waitFor(`the ${type} delivery to ${spec.key}`, () => receiver.received.find((d) => d.path === `/${spec.key}`));
      const fromHook = await appTester(hookOperation(spec.key).perform, bundle({ ...asZapierRequest(delivery), subscribeData: subscribed.hook }));
      expect(fromHook).toHaveLength(1);
      const item = fromHook[0];
      expect(item).toStrictEqual(JSON.parse(delivery.body).data);
      expect(item).toMatchObject({ type, device: { id: deviceId } });

      const polled = await waitFor(`the ${type} event in ${polling.key}`, async () => {
        /** @type {Array<{id: string}>} */
        const events = await appTester(operation(polling.key).perform, bundle({ inputData: { device_ids: [deviceId] } }));
        const same = events.filter((event) => event.id === item.id);
        return same.length > 0 ? same : undefined;
      });
      expect(polled).toHaveLength(1);
      expect(polled[0]).toStrictEqual(item);
      // No other delivery of this transition to this hook.
      expect(receiver.received.filter((d) => d.path === `/${spec.key}`)).toHaveLength(1);
    }, 60_000);
  }
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { attach, detach, env, loadApp, receive, requireConnector } from './make.js';
import { allDevices, eventTypeOf, onlineDevices, recordedEvent, setStatus, startReceiver } from './triggers-helpers.js';

// Each instant trigger's webhook: attaching subscribes one hook on the connector for the
// trigger's event and devices, a delivery becomes exactly the event the polling trigger lists,
// and detaching removes the hook. A local server stands in for the URL Make creates. The key
// may hold other hooks: the tests look only at the ones whose target is their own receiver, and
// delete what they made whatever fails. Deliveries need the test control (CONNECTOR_CONTROL_URL).

requireConnector();
const app = loadApp();
let receiverUrl = '';

/** The key's hooks (every page) that target this run's receiver. */
async function hooksOfKey() {
  const hooks = [];
  let url = `${env.baseUrl}/v1/hooks?limit=500`;
  while (url) {
    const response = await fetch(url, { headers: { 'X-API-Key': env.apiKey } });
    assert.equal(response.status, 200);
    hooks.push(...(await response.json()));
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '');
    url = next ? new URL(next[1], env.baseUrl).toString() : '';
  }
  return hooks.filter((hook) => hook.target_url === receiverUrl);
}

describe('webhooks', () => {
  let receiver;
  let devices;
  let online;
  before(async () => {
    receiver = await startReceiver();
    receiverUrl = receiver.url;
    online = await onlineDevices();
    // Deliveries need a device that is online now; attaching and detaching need any device.
    devices = online.length > 0 ? online : await allDevices();
    assert.deepEqual(await hooksOfKey(), [], 'no hook targets this run yet');
  });
  after(() => receiver.stop());

  for (const [index, [name, webhook]] of Object.entries(app.webhook).entries()) {
    test(`${name}: attach makes one hook, a delivery is the event, detach leaves none`, async (t) => {
      const type = eventTypeOf(webhook.attach);
      const device = devices[devices.length - 1 - index];
      if (!device) {
        t.skip(`the key sees ${devices.length} device(s); this needs one per webhook (the test dataset has them)`);
        return;
      }
      const data = await attach(app, name, receiver.url, { device_ids: [device] });
      try {
        assert.match(String(data.externalHookId), /\S/);
        const hooks = await hooksOfKey();
        assert.equal(hooks.length, 1, 'one hook');
        assert.equal(hooks[0].id, data.externalHookId);
        assert.equal(hooks[0].target_url, receiver.url);
        assert.deepEqual(hooks[0].events, [type]);
        assert.deepEqual(hooks[0].device_ids, [device]);
        // Attaching the same webhook again (Make retrying) finds the same hook.
        assert.deepEqual(await attach(app, name, receiver.url, { device_ids: [device] }), data);
        assert.equal((await hooksOfKey()).length, 1, 'still one hook');

        if (!env.controlUrl || !online.includes(device)) {
          t.diagnostic(`deliveries not tested: ${env.controlUrl ? 'no device of the key is online' : 'CONNECTOR_CONTROL_URL is not set'}`);
          return;
        }
        if (type === 'device.online') {
          await setStatus(device, 'offline');
          await recordedEvent('device.offline', device);
        }
        await setStatus(device, type === 'device.online' ? 'online' : 'offline');
        const delivery = await receiver.next((entry) => entry.body.data?.device?.id === device && entry.body.type === type);
        const bundles = receive(app, name, delivery, data);
        assert.equal(bundles.length, 1);
        assert.deepEqual(bundles[0], await recordedEvent(type, device), 'the same item the polling trigger lists');
        assert.ok(delivery.headers['webhook-signature'], 'the connector signs deliveries (Make cannot check it)');
      } finally {
        await detach(app, name, data);
      }
      assert.deepEqual(await hooksOfKey(), [], 'no hook left');
    });
  }

  test('without a device filter the hook covers every device', async () => {
    const [name] = Object.keys(app.webhook);
    const data = await attach(app, name, receiver.url, {});
    try {
      const [hook] = await hooksOfKey();
      assert.equal(hook.device_ids, null);
    } finally {
      await detach(app, name, data);
    }
    assert.deepEqual(await hooksOfKey(), []);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { attach, connectorGet, detach, env, loadApp, receive, requireConnector } from './make.js';
import { eventTypeOf, onlineDevices, recordedEvent, setStatus, startReceiver } from './triggers-helpers.js';

// Each instant trigger's webhook: attaching subscribes one hook on the connector for the
// trigger's event and devices, a delivery becomes exactly the event the polling trigger lists,
// and detaching removes the hook. A local server stands in for the URL Make creates.

requireConnector();
const app = loadApp();
const hooksOfKey = async () => connectorGet('/v1/hooks?limit=500');

describe('webhooks', () => {
  let receiver;
  let devices;
  before(async () => {
    receiver = await startReceiver();
    devices = await onlineDevices();
    assert.deepEqual(await hooksOfKey(), [], 'the key holds no hook before the test');
  });
  after(() => receiver.stop());

  for (const [index, [name, webhook]] of Object.entries(app.webhook).entries()) {
    test(`${name}: attach makes one hook, a delivery is the event, detach leaves none`, async () => {
      const type = eventTypeOf(webhook.attach);
      const device = devices[devices.length - 1 - index];
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

        if (!env.controlUrl) return;
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

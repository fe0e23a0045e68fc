import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { env, loadApp, poll, requireConnector } from './make.js';
import { onlineDevices, recordedEvent, setStatus } from './triggers-helpers.js';

// The polling triggers across runs, as Make keeps their position: the first run is the
// baseline, a status change is emitted once (exactly the item the connector lists), and a
// run after a restart (the position saved and read back) emits nothing again.

requireConnector();
const app = loadApp();
const polling = Object.entries(app.module).filter(([, module]) => module.moduleType === 'trigger');
const typeOf = (module) => module.communication.qs.type;

describe('polling triggers', { skip: env.controlUrl ? false : 'CONNECTOR_CONTROL_URL is not set' }, () => {
  let device;
  const states = {};
  before(async () => {
    device = (await onlineDevices())[0];
    for (const [name] of polling) {
      const first = await poll(app, name, {}, null);
      assert.deepEqual(first.bundles, [], `${name}: the first run is the baseline`);
      states[name] = first.state;
    }
  });

  /** One run of every polling trigger; returns name → bundles and keeps the new positions. */
  const runAll = async (parameters = {}) => {
    const out = {};
    for (const [name] of polling) {
      const result = await poll(app, name, parameters, JSON.parse(JSON.stringify(states[name])));
      states[name] = result.state;
      out[name] = result.bundles;
    }
    return out;
  };

  test('nothing new, nothing emitted', async () => {
    for (const bundles of Object.values(await runAll())) assert.deepEqual(bundles, []);
  });

  for (const status of ['offline', 'online']) {
    test(`a device going ${status} is emitted once, by its trigger only`, async () => {
      await setStatus(device, status);
      const event = await recordedEvent(`device.${status}`, device);
      const emitted = await runAll();
      for (const [name, module] of polling) {
        assert.deepEqual(emitted[name], typeOf(module) === `device.${status}` ? [event] : [], name);
      }
      for (const bundles of Object.values(await runAll())) assert.deepEqual(bundles, [], 'not again on the next run');
    });
  }

  test('a device filter asks the connector for those devices only', async () => {
    const [name, module] = polling[0];
    const result = await poll(app, name, { device_ids: [device] }, states[name]);
    assert.equal(new URL(result.log[0].url).searchParams.get('devices'), device);
    assert.equal(new URL(result.log[0].url).searchParams.get('type'), typeOf(module));
  });
});

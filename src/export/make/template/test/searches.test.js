import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { connectorGet, loadApp, MakeError, requireConnector, runModule, runRpc } from './make.js';

// Every search module, its request built from its templates, against the connector's own
// endpoint: the bundles are exactly the records the connector returns.

requireConnector();
const app = loadApp();
const firstChoice = async (rpc, parameters = {}) => (await runRpc(app, rpc, parameters)).bundles[0].value;

/** Per module: the parameters a user would map, and what the connector itself answers. */
const cases = {
  getDevice: async () => {
    const device_id = await firstChoice('devices');
    return { parameters: { device_id }, expected: [await connectorGet(`/devices/${encodeURIComponent(device_id)}`, { bearer: true })] };
  },
  listDevices: async () => {
    const expected = (await connectorGet('/devices?page_size=250', { bearer: true })).data;
    // Pages of 100 until 250 devices are in hand, or a short page says there are no more.
    const pages = expected.length >= 250 ? 3 : Math.floor(expected.length / 100) + 1;
    return { parameters: { limit: 250 }, expected, pages };
  },
  listMenus: async () => ({ parameters: {}, expected: (await connectorGet('/v1/menus')).menus }),
  listGroups: async () => {
    const menu_id = await firstChoice('menus');
    return { parameters: { menu_id }, expected: (await connectorGet(`/v1/groups?menus=${menu_id}`)).groups };
  },
  getGroup: async () => {
    const menu_id = await firstChoice('menus');
    const group_id = (await runRpc(app, 'menuGroups', { menu_id })).bundles.at(-1).value;
    return { parameters: { menu_id, group_id }, expected: (await connectorGet(`/v1/groups?menus=${menu_id}&groups=${group_id}`)).groups };
  },
};

const searches = Object.entries(app.module).filter(([, module]) => module.moduleType === 'search');

test('every search module has a case here', () => {
  assert.deepEqual(searches.map(([name]) => name).sort(), Object.keys(cases).sort());
});

for (const [name] of searches) {
  describe(`search ${name}`, () => {
    test('returns what the connector returns', async (t) => {
      if (!cases[name]) return t.skip('no case');
      const { parameters, expected, pages } = await cases[name]();
      const { bundles, log } = await runModule(app, name, parameters);
      assert.ok(expected.length > 0, 'the connector has records to compare');
      assert.deepEqual(bundles, expected);
      if (pages) {
        assert.equal(log.length, pages, 'one request per page, up to the limit');
        assert.deepEqual(
          log.map((entry) => new URL(entry.url).searchParams.get('page')),
          log.map((_entry, i) => (i === 0 ? null : String(i + 1))),
        );
      }
    });
  });
}

describe('search options', () => {
  test('listDevices filters on is_online and stops at the limit', async () => {
    const { bundles } = await runModule(app, 'listDevices', { is_online: true, limit: 5 });
    assert.deepEqual(bundles, (await connectorGet('/devices?is_online=true&page_size=5', { bearer: true })).data);
  });

  test('listGroups with tags asks for groups with any of them', async () => {
    const groups = (await connectorGet('/v1/groups')).groups;
    const tag = groups.flatMap((group) => group.tags)[0];
    assert.ok(tag, 'a tag to search for');
    const { bundles, log } = await runModule(app, 'listGroups', { tags: [tag] });
    assert.equal(new URL(log[0].url).searchParams.get('tags'), tag);
    assert.deepEqual(bundles, (await connectorGet(`/v1/groups?tags=${encodeURIComponent(tag)}`)).groups);
  });

  test('an unknown device is an error carrying the connector message', async () => {
    await assert.rejects(runModule(app, 'getDevice', { device_id: 'ff:ff:ff:ff:ff:fe' }), (err) => {
      assert.ok(err instanceof MakeError);
      assert.equal(err.statusCode, 404);
      assert.match(err.message, /^\[404\] .*not found/i);
      return true;
    });
  });

  test('a revoked or wrong key asks to fix the connection', async () => {
    await assert.rejects(runModule(app, 'listMenus', {}, { base_url: process.env.CONNECTOR_BASE_URL, api_key: 'sk_make_app_test_not_a_key_00000' }), (err) => {
      assert.equal(err.type, 'InvalidAccessTokenError');
      return true;
    });
  });
});

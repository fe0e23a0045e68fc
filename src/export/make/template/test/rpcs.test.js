import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import { connectorGet, loadApp, requireConnector, runRpc } from './make.js';

// Every RPC (the dropdowns) against the connector's own option list: same choices in the same
// order, every page followed, `q` searched on the server, dependent RPCs fed by their parent.

requireConnector();
const app = loadApp();

/** The connector path an RPC lists, with its parameters filled in. */
const pathOf = (rpc, parameters) => rpc.communication.url.replace(/\{\{parameters\.([a-z_]+)\}\}/g, (_match, key) => encodeURIComponent(parameters[key]));

/** Parameters for an RPC that depends on another (the groups of a menu): the parent's first choice. */
async function parentParameters(rpc) {
  const parameters = {};
  for (const param of rpc.params.filter((entry) => entry.name !== 'q')) {
    const parent = String(param.options).replace('rpc://', '');
    const { bundles } = await runRpc(app, parent);
    assert.ok(bundles.length > 0, `${parent} has a choice to feed ${param.name}`);
    parameters[param.name] = bundles[0].value;
  }
  return parameters;
}

const tuples = async (path, query = '') => (await connectorGet(`${path}?format=tuples${query}`)).map(([label, value]) => ({ label, value }));

for (const [name, rpc] of Object.entries(app.rpc)) {
  describe(`RPC ${name}`, () => {
    let parameters;
    before(async () => {
      parameters = await parentParameters(rpc);
    });

    test('lists the same choices as the connector, following every page', async () => {
      const path = pathOf(rpc, parameters);
      const expected = (await tuples(path)).slice(0, rpc.communication.response.limit);
      const { bundles, log } = await runRpc(app, name, parameters);
      assert.deepEqual(bundles, expected);
      const pageSize = rpc.communication.qs.limit;
      assert.equal(log.length, Math.max(1, Math.ceil(expected.length / pageSize)), 'one request per page');
      if (log.length > 1) assert.ok(new URL(log[1].url).searchParams.get('cursor'), 'the second page is asked for by cursor');
    });

    if (rpc.params.some((param) => param.name === 'q')) {
      test('searches on the server with q', async () => {
        const all = await tuples(pathOf(rpc, parameters));
        assert.ok(all.length > 0, 'something to search for');
        const word = all[all.length - 1].label.split(/[\s›]+/).filter(Boolean).pop();
        const { bundles, log } = await runRpc(app, name, { ...parameters, q: word });
        assert.equal(new URL(log[0].url).searchParams.get('q'), word);
        assert.deepEqual(bundles, await tuples(pathOf(rpc, parameters), `&q=${encodeURIComponent(word)}`));
        assert.ok(bundles.length > 0 && bundles.length <= all.length);
      });
    }
  });
}

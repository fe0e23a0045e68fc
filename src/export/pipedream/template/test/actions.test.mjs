import assert from "node:assert/strict";
import {
  before, test,
} from "node:test";
import {
  api, instantiate, keyOf, loadComponents, manifest, propOptions,
} from "./harness.mjs";

// Every action, run as Pipedream runs it (`run({ $ })` with its props), returns what the
// connector's own endpoint returns for the same inputs. Inputs with a dropdown take its first
// option, as a user picking from it would.

let app;
let components;
let served;

before(async () => {
  ({
    app, components,
  } = await loadComponents());
  served = await manifest();
});

/** The connector's answer for an operation and input values, read in one request. */
async function expected(operation, values) {
  const path = operation.request.path.replace(/\{([a-z0-9_]+)\}/g, (_m, key) => encodeURIComponent(values[key]));
  const search = new URLSearchParams(operation.request.query ?? {});
  for (const input of operation.inputs) {
    const value = values[input.key];
    if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
    if (input.in === "query") search.set(input.param ?? input.key, Array.isArray(value)
      ? value.join(",")
      : String(value));
  }
  let limit;
  if (operation.paging) {
    limit = values[operation.paging.limitInput] ?? operation.inputs.find((input) => input.key === operation.paging.limitInput)?.default;
    search.set(operation.paging.size, String(Math.min(limit, operation.paging.maxSize)));
  }
  const query = search.toString();
  const response = await api(`${path}${query
    ? `?${query}`
    : ""}`, {
    bearer: operation.request.auth === "bearer",
  });
  assert.equal(response.status, 200, `${operation.id}: ${JSON.stringify(response.body)}`);
  let result = operation.result.items
    ? response.body[operation.result.items]
    : response.body;
  if (operation.paging) result = result.slice(0, limit);
  return operation.result.single && Array.isArray(result)
    ? result[0]
    : result;
}

/** Values for an operation's inputs; `all`: optional ones too. */
async function inputValues(operation, action, all) {
  const values = {};
  for (const input of operation.inputs) {
    if (!input.required && !all) continue;
    if (input.optionsFrom) {
      const page = await propOptions(action, input.key, values, {
        prevContext: {},
      });
      assert.ok(page.options.length > 0, `${operation.id}.${input.key}: the dropdown has options`);
      values[input.key] = page.options[0].value;
    } else if (input.in === "paging") values[input.key] = 250;
    else if (input.type === "boolean") values[input.key] = true;
    else if (input.required) assert.fail(`${operation.id}.${input.key}: no test value for a required ${input.type}`);
  }
  return values;
}

async function runAction(action, props) {
  const running = instantiate(action, {
    props,
  });
  const result = await running.run();
  assert.equal(typeof running.exports.$summary, "string");
  return result;
}

test("every action with its required inputs returns what the connector returns", async () => {
  for (const operation of served.operations) {
    const action = components.get(keyOf(app, operation.id));
    const values = await inputValues(operation, action, false);
    assert.deepEqual(await runAction(action, values), await expected(operation, values), operation.id);
  }
});

test("every action with all its inputs returns what the connector returns", async () => {
  for (const operation of served.operations) {
    const action = components.get(keyOf(app, operation.id));
    const values = await inputValues(operation, action, true);
    assert.deepEqual(await runAction(action, values), await expected(operation, values), operation.id);
  }
});

test("a paged list reads every page up to its limit", async (t) => {
  for (const operation of served.operations.filter((candidate) => candidate.paging)) {
    const action = components.get(keyOf(app, operation.id));
    const all = await expected(operation, {
      [operation.paging.limitInput]: 1000,
    });
    if (all.length <= 250) {
      // The test dataset has enough; a small account cannot show a third page.
      t.skip(`${operation.id}: the key sees ${all.length} records, this needs more than 250 (the test dataset)`);
      continue;
    }
    // Pages of 100 instead of the connector's maximum, so 250 records take three requests.
    const component = {
      ...action,
      methods: {
        ...action.methods,
        operation: () => ({
          ...action.methods.operation(),
          paging: {
            ...operation.paging,
            maxSize: 100,
          },
        }),
      },
    };
    const running = instantiate(component, {
      props: {
        [operation.paging.limitInput]: 250,
      },
    });
    const calls = [];
    const request = running.self.app._request;
    running.self.app._request = (options) => {
      calls.push(options.params);
      return request(options);
    };
    const result = await running.run();
    assert.deepEqual(result, all.slice(0, 250));
    assert.deepEqual(calls.map((params) => params[operation.paging.page]), [
      1,
      2,
      3,
    ]);
    // Without a limit: the input's default.
    const byDefault = await runAction(action, {});
    const limit = operation.inputs.find((input) => input.key === operation.paging.limitInput).default;
    assert.equal(byDefault.length, Math.min(limit, all.length));
  }
});

test("a record that does not exist fails the action with the connector's message", async () => {
  const getDevice = served.operations.find((operation) => operation.id === "get_device");
  if (!getDevice) return;
  await assert.rejects(runAction(components.get(keyOf(app, "get_device")), {
    device_id: "ff:ff:ff:ff:ff:ff",
  }), /Device not found/);
});

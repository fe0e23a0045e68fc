import assert from "node:assert/strict";
import {
  before, test,
} from "node:test";
import {
  $auth, api, appInstance, keyOf, loadComponents, manifest, otherApiKey,
} from "./harness.mjs";

// The app and its components as a whole: the connection test, and one component for every
// operation and trigger of the manifest the connector serves, with the names it gives.

let app;
let components;
let served;

before(async () => {
  ({
    app, components,
  } = await loadComponents());
  served = await manifest();
});

test("the connection test calls the connector and is labelled with the account's name", async () => {
  const {
    me, label,
  } = await appInstance(app).testConnection();
  const direct = await api("/v1/me");
  assert.deepEqual(me, direct.body);
  assert.equal(label, direct.body.account.name);
});

test("a wrong key fails the connection test with the connector's 401", async () => {
  const wrong = appInstance(app, {
    ...$auth,
    api_key: "sk_not_a_real_key_000000000000",
  });
  await assert.rejects(wrong.testConnection(), (err) => err.status === 401);
});

test("another account's key is labelled with that account", { skip: !otherApiKey }, async () => {
  const other = appInstance(app, {
    ...$auth,
    api_key: otherApiKey,
  });
  const { label } = await other.testConnection();
  assert.equal(label, (await api("/v1/me", {
    key: otherApiKey,
  })).body.account.name);
});

test("every option source is a propDefinition of the app", () => {
  for (const source of served.optionSources) {
    const definition = app.propDefinitions[source.id];
    assert.ok(definition, `no propDefinition ${source.id}`);
    assert.equal(typeof definition.options, "function");
    assert.equal(definition.useQuery, true);
  }
});

test("every operation is an action whose props are its inputs", () => {
  for (const operation of served.operations) {
    const action = components.get(keyOf(app, operation.id));
    assert.ok(action, `no action ${keyOf(app, operation.id)}`);
    assert.equal(action.type, "action");
    const props = Object.keys(action.props).filter((key) => key !== "app");
    assert.deepEqual(props, operation.inputs.map((input) => input.key));
  }
});

test("every trigger is an instant and a polling source", () => {
  for (const trigger of served.triggers) {
    const instant = components.get(keyOf(app, trigger.id));
    const polling = components.get(`${keyOf(app, trigger.id)}-polling`);
    assert.ok(instant?.props.http, `no instant source for ${trigger.id}`);
    assert.ok(polling?.props.timer, `no polling source for ${trigger.id}`);
    for (const source of [
      instant,
      polling,
    ]) {
      assert.equal(source.dedupe, "unique");
      for (const field of trigger.inputFields) assert.ok(source.props[field.key], `${source.key} has no prop ${field.key}`);
    }
  }
});

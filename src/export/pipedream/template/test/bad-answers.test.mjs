import assert from "node:assert/strict";
import { createServer } from "node:http";
import {
  after, before, describe, test,
} from "node:test";
import {
  $auth, appInstance, instantiate, keyOf, loadComponents, manifest,
} from "./harness.mjs";

// A server on a local port that answers 200 badly (what a proxy or a broken deployment in front
// of the connector may do), or never: every component must then fail with a clear error, never
// return an empty list or the bad object. CONNECTOR_TIMEOUT_MS shortens the 30 s bound while
// the server never answers; a bad answer comes at once, and gets a generous bound, so a busy
// machine is not mistaken for a hanging server.

const timeoutMs = 400;
const generousMs = 15000;
const answers = {
  "invalid JSON": {
    body: "{\"id\": \"a4:83",
    error: /not valid JSON/,
  },
  "an object where something else belongs": {
    body: "{\"unexpected\": true}",
    error: /unexpected answer to .*expected/,
  },
  "a list of records without ids": {
    body: "[{\"name\": \"Front counter\"}]",
    error: /unexpected answer to .*expected/,
  },
};

let server;
let auth;
let mode = "hang";
const hanging = new Set();
let app;
let components;
let served;

before(async () => {
  process.env.CONNECTOR_TIMEOUT_MS = String(generousMs);
  ({
    app, components,
  } = await loadComponents());
  served = await manifest();
  server = createServer((req, res) => {
    req.resume();
    if (mode === "hang") {
      hanging.add(res);
      return;
    }
    res.writeHead(200, {
      "content-type": "application/json",
    }).end(answers[mode].body);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  auth = {
    ...$auth,
    base_url: `http://127.0.0.1:${server.address().port}`,
  };
});

after(async () => {
  delete process.env.CONNECTOR_TIMEOUT_MS;
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Every value a prop might need, so that each call reaches the server. */
const values = {
  menuId: "menu-1",
  menu_id: "menu-1",
  group_id: "group-1",
  device_id: "a4:83:e7:1f:2b:01",
};

/** Each call of the app that reads an answer, by name. */
function calls() {
  const list = [
    [
      "the connection test",
      () => appInstance(app, auth).testConnection(),
    ],
  ];
  for (const name of Object.keys(app.propDefinitions)) {
    list.push([
      `dropdown ${name}`,
      () => app.propDefinitions[name].options.call(appInstance(app, auth), {
        ...values,
      }),
    ]);
  }
  for (const operation of served.operations) {
    list.push([
      `action ${operation.id}`,
      () => instantiate(components.get(keyOf(app, operation.id)), {
        auth,
        props: values,
      }).run(),
    ]);
  }
  for (const trigger of served.triggers) {
    list.push([
      `polling source ${trigger.id}`,
      () => instantiate(components.get(`${keyOf(app, trigger.id)}-polling`), {
        auth,
      }).run({}),
    ]);
    list.push([
      `activating instant source ${trigger.id}`,
      () => instantiate(components.get(keyOf(app, trigger.id)), {
        auth,
        endpoint: "https://example.com/hook",
      }).activate(),
    ]);
  }
  return list;
}

for (const [
  answer,
  { error },
] of Object.entries(answers)) {
  describe(`a 200 with ${answer}`, () => {
    test("fails every call with a clear error", async () => {
      mode = answer;
      process.env.CONNECTOR_TIMEOUT_MS = String(generousMs);
      for (const [
        name,
        call,
      ] of calls()) {
        await assert.rejects(call(), error, name);
      }
    });
  });
}

describe("a connector that never answers", () => {
  test("fails every call once CONNECTOR_TIMEOUT_MS has passed", async () => {
    mode = "hang";
    process.env.CONNECTOR_TIMEOUT_MS = String(timeoutMs);
    for (const [
      name,
      call,
    ] of calls()) {
      const started = Date.now();
      await assert.rejects(call(), new RegExp(`no answer from the connector within ${timeoutMs / 1000} s`), name);
      // Generous: only shows the bound is the one set, not Pipedream's own much longer one.
      assert.ok(Date.now() - started < 20000, `${name} took ${Date.now() - started} ms`);
    }
  });
});

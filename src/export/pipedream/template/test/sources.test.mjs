import assert from "node:assert/strict";
import {
  after, before, test,
} from "node:test";
import {
  MemoryDb, api, controlUrl, instantiate, keyOf, loadComponents, manifest, setDevice, sleep, startReceiver, waitFor,
} from "./harness.mjs";

// Every trigger's two sources against the live connector: the instant source makes one hook
// when activated (none twice), turns a signed delivery into one emit of the Event, refuses a
// forged one with 401, and leaves no hook when deactivated; the polling source records a
// baseline first, then emits each event once, across runs and restarts, and the very item the
// instant source emitted. Status changes come from the test control (CONNECTOR_CONTROL_URL):
// without it, only what needs no status change runs (the hook made on activate, never twice,
// and removed on deactivate; the polling source's baseline), against any connector and key.
// Every hook a test makes is deleted in a `finally`, whatever fails; the tests look only at
// the hooks whose target is their own endpoint.

let app;
let components;
let served;
let receiver;
let devices;

before(async () => {
  ({
    app, components,
  } = await loadComponents());
  served = await manifest();
  receiver = await startReceiver();
  devices = (await api("/devices?page_size=1000", {
    bearer: true,
  })).body.data;
});

after(async () => {
  await receiver?.close();
});

/** The hooks of the key whose target is `endpoint`. */
async function hooksFor(endpoint) {
  const hooks = [];
  let path = "/v1/hooks?limit=500";
  for (;;) {
    const response = await api(path);
    hooks.push(...response.body);
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get("link") ?? "");
    if (!next) break;
    const url = new URL(next[1]);
    path = url.pathname + url.search;
  }
  return hooks.filter((hook) => hook.target_url === endpoint && hook.status !== "disabled");
}

/** The status changes that produce an event of `type` for a device that is online now. */
async function cause(type, deviceId) {
  await setDevice(deviceId, "offline");
  if (type === "device.online") {
    await waitFor(`${deviceId} offline`, async () => (await api(`/devices/${encodeURIComponent(deviceId)}`, {
      bearer: true,
    })).body.is_online === false);
    await sleep(1500); // one poll of the connector sees it offline
    await setDevice(deviceId, "online");
  }
}

test("every trigger: the instant source's hook and the polling source's baseline", async (t) => {
  for (const trigger of served.triggers) {
    await t.test(trigger.id, () => checkHook(trigger));
  }
});

// The test control changes devices of the connector's test dataset; the eleventh device on
// is left alone by the other tests.
const skipDeliveries = controlUrl
  ? false
  : "set CONNECTOR_CONTROL_URL (npm run test:platforms starts one) to test deliveries and polling";

test("every trigger: deliveries to the instant source, the same item from the polling source", {
  skip: skipDeliveries,
}, async (t) => {
  for (const [
    index,
    trigger,
  ] of served.triggers.entries()) {
    const device = devices[10 + index];
    if (!device) {
      t.skip(`the key sees ${devices.length} devices; the test dataset has more`);
      return;
    }
    await t.test(trigger.id, () => checkTrigger(trigger, device.id));
  }
});

/** The props of a trigger's sources that watch only `deviceId` (none: every device). */
function propsFor(trigger, deviceId) {
  const devicesProp = trigger.inputFields.find((field) => field.hookField === "device_ids")?.key;
  return devicesProp && deviceId
    ? {
      [devicesProp]: [
        deviceId,
      ],
    }
    : {};
}

async function checkHook(trigger) {
  const instantSource = components.get(keyOf(app, trigger.id));
  const pollingSource = components.get(`${keyOf(app, trigger.id)}-polling`);
  const endpoint = receiver.endpoint(`${trigger.id}-hook-${Date.now()}`);
  const deviceId = devices[0]?.id;
  const props = propsFor(trigger, deviceId);

  const pollingDb = new MemoryDb();
  const polling = instantiate(pollingSource, {
    props,
    db: pollingDb,
  });
  await polling.run({});
  assert.equal(polling.emitted.length, 0, "the first poll only records a baseline");
  assert.ok(pollingDb.get("cursor"), "the cursor is kept in db");

  const instant = instantiate(instantSource, {
    props,
    endpoint,
  });
  try {
    await instant.activate();
    let hooks = await hooksFor(endpoint);
    assert.equal(hooks.length, 1, "one hook after activate");
    assert.deepEqual(hooks[0].events, trigger.eventTypes);
    await instant.activate();
    hooks = await hooksFor(endpoint);
    assert.equal(hooks.length, 1, "still one hook after a second activate");
    assert.equal(hooks[0].id, instant.db.get("hook").id);
  } finally {
    await instant.deactivate();
  }
  assert.equal((await hooksFor(endpoint)).length, 0, "no hook left after deactivate");
}

async function checkTrigger(trigger, deviceId) {
  const type = trigger.eventTypes[0];
  const instantSource = components.get(keyOf(app, trigger.id));
  const pollingSource = components.get(`${keyOf(app, trigger.id)}-polling`);
  const endpoint = receiver.endpoint(`${trigger.id}-${Date.now()}`);
  const devicesProp = trigger.inputFields.find((field) => field.hookField === "device_ids")?.key;
  const props = propsFor(trigger, deviceId);

  // The polling source's first run is the baseline: nothing is emitted.
  const pollingDb = new MemoryDb();
  const polling = instantiate(pollingSource, {
    props,
    db: pollingDb,
  });
  await polling.run({});
  assert.equal(polling.emitted.length, 0, "the first poll only records a baseline");
  assert.ok(pollingDb.get("cursor"), "the cursor is kept in db");

  // Activating makes exactly one hook, with the source's filters; activating again does not add one.
  const instant = instantiate(instantSource, {
    props,
    endpoint,
  });
  try {
    await checkDeliveries({
      trigger, deviceId, devicesProp, type, endpoint, instant, polling, pollingSource, pollingDb, props,
    });
  } finally {
    await instant.deactivate();
    await setDevice(deviceId, "online");
  }
}

async function checkDeliveries({
  trigger, deviceId, devicesProp, type, endpoint, instant, polling, pollingSource, pollingDb, props,
}) {
  await instant.activate();
  let hooks = await hooksFor(endpoint);
  assert.equal(hooks.length, 1, "one hook after activate");
  assert.deepEqual(hooks[0].events, trigger.eventTypes);
  if (devicesProp) assert.deepEqual(hooks[0].device_ids.map((id) => id.toLowerCase()), [
    deviceId.toLowerCase(),
  ]);
  await instant.activate();
  hooks = await hooksFor(endpoint);
  assert.equal(hooks.length, 1, "still one hook after a second activate");
  assert.equal(hooks[0].id, instant.db.get("hook").id);

  // A status change reaches the source as a signed delivery, which it emits once.
  const path = new URL(endpoint).pathname;
  await cause(type, deviceId);
  const delivery = await waitFor(`a ${type} delivery`, () => receiver.requests.find((request) => request.path === path && request.body?.type === type));
  await instant.run(delivery);
  assert.deepEqual(instant.responses.map((response) => response.status), [
    200,
  ]);
  assert.equal(instant.emitted.length, 1);
  const [
    emitted,
  ] = instant.emitted;
  assert.deepEqual(emitted.event, delivery.body.data, "the Event itself is emitted");
  assert.equal(emitted.meta.id, delivery.body.data.id, "deduped on the Event's id");
  assert.equal(emitted.event.device.id.toLowerCase(), deviceId.toLowerCase());

  // Forged deliveries are answered 401 and emit nothing.
  const forgedBody = delivery.bodyRaw.replace(/"status":"[a-z]+"/, "\"status\":\"forged\"");
  await instant.run({
    ...delivery,
    bodyRaw: forgedBody,
    body: JSON.parse(forgedBody),
  });
  await instant.run({
    ...delivery,
    headers: {
      ...delivery.headers,
      "webhook-signature": "v1,bm90IGEgc2lnbmF0dXJl",
    },
  });
  const unsigned = Object.fromEntries(Object.entries(delivery.headers).filter(([
    name,
  ]) => name !== "webhook-signature"));
  await instant.run({
    ...delivery,
    headers: unsigned,
  });
  assert.deepEqual(instant.responses.slice(1).map((response) => response.status), [
    401,
    401,
    401,
  ]);
  assert.equal(instant.emitted.length, 1, "nothing more is emitted");

  // The polling source emits the same item, once.
  await waitFor("the polling source's emit", async () => {
    await polling.run({});
    return polling.emitted.some((item) => item.event.id === emitted.event.id);
  });
  const fromPolling = polling.emitted.filter((item) => item.event.id === emitted.event.id);
  assert.equal(fromPolling.length, 1);
  assert.deepEqual(fromPolling[0].event, emitted.event, "the polling source emits the instant source's item");
  for (const item of polling.emitted) {
    assert.ok(trigger.eventTypes.includes(item.event.type));
    assert.equal(item.event.device.id.toLowerCase(), deviceId.toLowerCase());
  }
  const count = polling.emitted.length;
  await polling.run({});
  assert.equal(polling.emitted.length, count, "a later run emits nothing again");
  // A restart: a new instance with the same db emits nothing already emitted.
  const restarted = instantiate(pollingSource, {
    props,
    db: pollingDb,
  });
  await restarted.run({});
  assert.equal(restarted.emitted.length, 0, "nothing again after a restart");
  const ids = polling.emitted.map((item) => item.meta.id);
  assert.equal(new Set(ids).size, ids.length, "each event once");

  // Deactivating deletes the hook; a delivery after that is refused.
  await instant.deactivate();
  assert.equal((await hooksFor(endpoint)).length, 0, "no hook left after deactivate");
  await instant.deactivate();
  await instant.run(delivery);
  assert.equal(instant.responses.at(-1).status, 410);
  assert.equal(instant.emitted.length, 1);
}

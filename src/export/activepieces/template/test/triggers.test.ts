import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { hookStoreKey, pollStoreKey, type StoredHook } from '../src/lib/triggers';
import { sign } from '../src/lib/signature';
import { connectorGet, context, control, controlUrl, definition, dropdown, mapStore, startReceiver, triggers, waitFor, type Delivery } from './harness';

type Event = Record<string, unknown> & { id: string; type: string; device: { id: string } };
type Trigger = (typeof triggers)[string];
const call = (trigger: Trigger, method: 'onEnable' | 'onDisable' | 'run' | 'test', ctx: never) => (trigger[method] as (ctx: never) => Promise<unknown>)(ctx);

test('every trigger is a webhook trigger and a _polling trigger, with props named by its input keys', () => {
  const names = definition.triggers.flatMap((trigger) => [trigger.id, `${trigger.id}_polling`]);
  assert.deepEqual(Object.keys(triggers).sort(), names.sort());
  for (const trigger of definition.triggers) {
    assert.equal(triggers[trigger.id]!.type, 'WEBHOOK');
    assert.equal(triggers[`${trigger.id}_polling`]!.type, 'POLLING');
    assert.deepEqual(Object.keys(triggers[trigger.id]!.props), trigger.inputs.map((input) => input.key));
  }
});

/** The key's hooks on the connector (every page); tests look only for the ones they made. */
async function hookIds(): Promise<string[]> {
  const ids: string[] = [];
  let path: string | null = '/v1/hooks?limit=500';
  while (path) {
    const response = await connectorGet(path);
    assert.equal(response.status, 200);
    ids.push(...(response.body as Array<{ id: string }>).map((hook) => hook.id));
    const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '');
    path = next ? new URL(next[1]!).pathname + new URL(next[1]!).search : null;
  }
  return ids;
}

// Needs no status change, so it runs against any connector and key: enabling makes one hook
// (enabling again keeps one), disabling deletes it, whatever fails in between.
test('enabling a webhook trigger makes one hook; disabling leaves none', async () => {
  for (const spec of definition.triggers) {
    const hookStore = mapStore();
    const webhookUrl = `http://127.0.0.1:9/webhooks/${spec.id}-${Date.now()}`;
    const ctx = () => context({ store: hookStore, webhookUrl });
    let id: string | undefined;
    try {
      await call(triggers[spec.id]!, 'onEnable', ctx());
      id = (await hookStore.get<StoredHook>(hookStoreKey))?.id;
      assert.ok(id, 'the hook is kept in the store');
      await call(triggers[spec.id]!, 'onEnable', ctx());
      assert.equal((await hookStore.get<StoredHook>(hookStoreKey))?.id, id);
      assert.equal((await hookIds()).filter((candidate) => candidate === id).length, 1, 'one hook');
    } finally {
      await call(triggers[spec.id]!, 'onDisable', ctx());
    }
    assert.ok(!(await hookIds()).includes(id!), 'no hook left behind');
  }
});

/** The payload Activepieces hands to run() for a delivery. */
const payloadOf = (delivery: Delivery) => ({ body: JSON.parse(delivery.rawBody) as unknown, rawBody: delivery.rawBody, headers: delivery.headers, queryParams: {} });

async function deviceIsOnline(id: string): Promise<boolean> {
  const response = await connectorGet(`/devices/${encodeURIComponent(id)}`, true);
  return (response.body as { is_online: boolean }).is_online;
}

async function eventIds(type: string, device: string): Promise<Set<string>> {
  const response = await connectorGet(`/v1/triggers/device-status?type=${type}&devices=${encodeURIComponent(device)}&limit=500`);
  return new Set((response.body as Event[]).map((event) => event.id));
}

/** Makes `device` produce an event of `type`: first the opposite transition, when it is needed. */
async function causeTransition(type: string, device: string): Promise<void> {
  const target = type === 'device.offline' ? 'offline' : 'online';
  const opposite = target === 'offline' ? 'online' : 'offline';
  const online = await deviceIsOnline(device);
  if ((target === 'online') === online) {
    const before = await eventIds(`device.${opposite}`, device);
    await control(device, opposite);
    await waitFor(`${device} to go ${opposite}`, async () => ([...(await eventIds(`device.${opposite}`, device))].some((id) => !before.has(id)) ? true : null));
  }
  await control(device, target);
}

describe('triggers against the live connector', { skip: controlUrl ? false : 'CONNECTOR_CONTROL_URL is not set' }, () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let devices: Array<{ label: string; value: string }>;
  before(async () => {
    receiver = await startReceiver();
    devices = (await dropdown(triggers[definition.triggers[0]!.id]!.props, 'device_ids').options()).options;
  });
  after(async () => {
    await receiver.close();
  });

  definition.triggers.forEach((spec, index) => {
    test(`${spec.id}: the webhook and the polling trigger emit the same event, once`, async () => {
      const device = devices[devices.length - 1 - index]!.value; // one device per trigger
      const webhook = triggers[spec.id]!;
      const polling = triggers[`${spec.id}_polling`]!;
      const propsValue = { device_ids: [device] };
      const webhookUrl = `${receiver.url}/${spec.id}`;
      const hookStore = mapStore();
      const pollStore = mapStore();
      const hookCtx = (payload?: unknown) => context({ propsValue, store: hookStore, webhookUrl, payload });
      const pollCtx = () => context({ propsValue, store: pollStore });

      // Enabling subscribes once; enabling again keeps one hook.
      let hook: StoredHook | null = null;
      try {
        await call(webhook, 'onEnable', hookCtx());
        hook = (await hookStore.get<StoredHook>(hookStoreKey))!;
        assert.ok(hook.id && hook.secret.startsWith('whsec_'));
        await call(webhook, 'onEnable', hookCtx());
        assert.equal((await hookStore.get<StoredHook>(hookStoreKey))!.id, hook.id);
        assert.equal((await hookIds()).filter((id) => id === hook!.id).length, 1);

        // The polling trigger's first poll is a baseline.
        await call(polling, 'onEnable', pollCtx());
        assert.ok(pollStore.map.has(pollStoreKey));
        assert.deepEqual(await call(polling, 'run', pollCtx()), []);

        const delivered = receiver.deliveries.length;
        await causeTransition(spec.eventTypes[0]!, device);
        const delivery = await waitFor(`a ${spec.eventTypes[0]} delivery`, async () =>
          receiver.deliveries.slice(delivered).find((candidate) => (JSON.parse(candidate.rawBody) as { data?: Event }).data?.device.id === device.toLowerCase()),
        );

        // run() verifies the signature and returns the Event.
        const emitted = (await call(webhook, 'run', hookCtx(payloadOf(delivery)))) as Event[];
        assert.equal(emitted.length, 1);
        const event = emitted[0]!;
        assert.equal(event.type, spec.eventTypes[0]);
        assert.equal(event.device.id, device.toLowerCase());
        assert.deepEqual(event, (JSON.parse(delivery.rawBody) as { data: Event }).data);

        // A forged delivery is refused: changed body, or signed with another secret.
        const forgedBody = delivery.rawBody.replace(event.id, `${event.id}x`);
        await assert.rejects(call(webhook, 'run', hookCtx({ ...payloadOf(delivery), rawBody: forgedBody, body: JSON.parse(forgedBody) })), /signature does not match/);
        const otherSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
        const headers = { ...delivery.headers, 'webhook-signature': sign(otherSecret, delivery.headers['webhook-id']!, delivery.headers['webhook-timestamp']!, delivery.rawBody) };
        await assert.rejects(call(webhook, 'run', hookCtx({ ...payloadOf(delivery), headers })), /signature does not match/);
        const unsigned = { ...delivery.headers };
        delete unsigned['webhook-signature'];
        await assert.rejects(call(webhook, 'run', hookCtx({ ...payloadOf(delivery), headers: unsigned })), /signature headers are missing/);

        // The polling trigger emits the very same event, then nothing more (also after a restart:
        // the store is all it keeps).
        const polled = await waitFor('the polled event', async () => {
          const items = (await call(polling, 'run', pollCtx())) as Event[];
          return items.length > 0 ? items : null;
        });
        assert.deepEqual(polled, [event]);
        assert.deepEqual(await call(polling, 'run', pollCtx()), []);

        // test(): recent events of the trigger's type.
        for (const trigger of [webhook, polling]) {
          const samples = (await call(trigger, 'test', hookCtx())) as Event[];
          assert.ok(samples.length > 0);
          for (const sample of samples) assert.ok(spec.eventTypes.includes(sample.type));
          assert.ok(samples.some((sample) => sample.id === event.id));
        }
      } finally {
        await call(webhook, 'onDisable', hookCtx());
        await call(polling, 'onDisable', pollCtx());
      }
      assert.equal(hookStore.map.has(hookStoreKey), false);
      assert.equal(pollStore.map.has(pollStoreKey), false);
      assert.ok(!(await hookIds()).includes(hook!.id), 'no hook left behind');
      // Disabling twice is harmless.
      await call(webhook, 'onDisable', hookCtx());
    });
  });

  test('test() without events of the type gives samples of it', async () => {
    for (const spec of definition.triggers) {
      const samples = (await call(triggers[spec.id]!, 'test', context({ propsValue: { device_ids: ['02:00:00:00:ff:fe'] } }))) as Event[];
      assert.ok(samples.length > 0);
      for (const sample of samples) assert.ok(spec.eventTypes.includes(sample.type));
    }
  });
});

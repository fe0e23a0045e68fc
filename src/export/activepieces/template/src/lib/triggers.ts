import { createTrigger, Property, TriggerStrategy, type Store } from '@activepieces/pieces-framework';
import { definition } from '../definition';
import { signageAuth } from './auth';
import { call, ConnectorError, credentials, fillPath, isEmpty, toList, type Credentials } from './connector';
import { dropdownProp } from './options';
import { listProblem, objectProblem } from './shape';
import { queuedTolerance, signatureProblem } from './signature';
import type { TriggerInputSpec, TriggerSpec } from './types';

/**
 * Every trigger of the manifest twice: `<id>`, a webhook trigger (the connector POSTs one
 * signed delivery per event to the flow's webhook URL), and `<id>_polling`, a polling trigger.
 * Both emit the event itself, so a flow sees the same item whichever it uses.
 */

type Event = Record<string, unknown> & { id?: unknown; type?: unknown };

/** What onEnable keeps in the flow's store: the hook, to delete it and verify its deliveries. */
export interface StoredHook {
  id: string;
  secret: string;
}
export const hookStoreKey = 'signage_connector_hook';

/** The polling trigger's memory: ids already emitted (or seen at the baseline), newest last. */
export interface PollState {
  seen: string[];
}
export const pollStoreKey = 'signage_connector_poll';
/** The most ids remembered: twice the largest page the polling endpoint returns. */
export const rememberedIds = 1000;
/** Events read per poll (the polling endpoint's maximum). */
export const pollLimit = 500;

function inputProp(input: TriggerInputSpec) {
  const description = input.helpText ?? undefined;
  if (input.optionsFrom) return dropdownProp({ ...input, optionsFrom: input.optionsFrom, optionParams: {} });
  // Trigger inputs are filters: free text (a list is comma-separated).
  return Property.ShortText({ displayName: input.label, ...(description ? { description } : {}), required: input.required });
}

const inputValue = (input: TriggerInputSpec, values: Record<string, unknown>): unknown =>
  input.list ? toList(values[input.key]) : values[input.key];

/** The endpoint's fixed query plus the inputs that map to a query parameter (lists comma-joined). */
function eventQuery(trigger: TriggerSpec, fixed: Record<string, string> | undefined, values: Record<string, unknown>): Record<string, string> {
  const query: Record<string, string> = { ...fixed };
  for (const input of trigger.inputs) {
    if (!input.pollingParam) continue;
    const value = inputValue(input, values);
    if (!isEmpty(value)) query[input.pollingParam] = Array.isArray(value) ? value.join(',') : String(value);
  }
  return query;
}

async function fetchEvents(creds: Credentials, trigger: TriggerSpec, endpoint: TriggerSpec['polling'], values: Record<string, unknown>, extra: Record<string, string> = {}): Promise<Event[]> {
  const response = await call(creds, {
    method: endpoint.method,
    path: fillPath(endpoint.path, values),
    query: { ...eventQuery(trigger, endpoint.query, values), ...extra },
    // Events with the id they are deduplicated on and their type.
    check: (body) => listProblem(body, ['id', 'type']),
  });
  return response.body as Event[];
}

const ofTrigger = (trigger: TriggerSpec) => (event: Event | null | undefined): event is Event =>
  !!event && typeof event === 'object' && typeof event.id === 'string' && trigger.eventTypes.includes(String(event.type));

/** For a flow's "test": a few recent events, else samples built from the user's own devices. */
async function recentOrSample(trigger: TriggerSpec, auth: unknown, values: Record<string, unknown>): Promise<Event[]> {
  const creds = credentials(auth);
  const recent = (await fetchEvents(creds, trigger, trigger.hook.list, values, { limit: '5' })).filter(ofTrigger(trigger));
  if (recent.length > 0) return recent;
  const samples = await fetchEvents(creds, trigger, trigger.hook.sample, {});
  const typed = samples.filter(ofTrigger(trigger));
  return typed.length > 0 ? typed : [trigger.sample as Event];
}

/** The delivery's body exactly as received: the bytes the signature covers. */
function rawBodyOf(payload: { body?: unknown; rawBody?: unknown }): string {
  const raw = payload.rawBody;
  if (typeof raw === 'string') return raw;
  if (raw instanceof Uint8Array) return Buffer.from(raw).toString('utf8');
  // Without the raw bytes, the parsed body is serialised again (the connector sends compact JSON).
  return typeof payload.body === 'string' ? payload.body : JSON.stringify(payload.body);
}

async function deleteHook(creds: Credentials, trigger: TriggerSpec, hook: StoredHook): Promise<void> {
  // A hook that is already gone is what disabling wants.
  await call(creds, { method: trigger.hook.unsubscribe.method, path: fillPath(trigger.hook.unsubscribe.path, { id: hook.id }), allow: [404, 410] });
}

function webhookTrigger(trigger: TriggerSpec) {
  return createTrigger({
    auth: signageAuth,
    name: trigger.id,
    displayName: trigger.title,
    description: trigger.description,
    type: TriggerStrategy.WEBHOOK,
    props: Object.fromEntries(trigger.inputs.map((input) => [input.key, inputProp(input)])),
    sampleData: trigger.sample,
    onEnable: async (context) => {
      const creds = credentials(context.auth);
      const values = context.propsValue as Record<string, unknown>;
      const subscribe = trigger.hook.subscribe;
      const body: Record<string, unknown> = { ...subscribe.body, target_url: context.webhookUrl };
      for (const input of trigger.inputs) {
        const value = inputValue(input, values);
        if (input.hookField && !isEmpty(value)) body[input.hookField] = value;
      }
      // Its id (to delete it) and secret (to check deliveries).
      const check = (answer: unknown) => objectProblem(answer, ['id', 'secret']);
      const response = await call(creds, { method: subscribe.method, path: fillPath(subscribe.path, values), ...(subscribe.query ? { query: subscribe.query } : {}), body, check });
      const created = response.body as { id: string; secret: string };
      // Enabled again (changed filters): the previous hook goes, so the flow never has two.
      const previous = await context.store.get<StoredHook>(hookStoreKey);
      if (previous && previous.id !== created.id) await deleteHook(creds, trigger, previous);
      await context.store.put<StoredHook>(hookStoreKey, { id: created.id, secret: created.secret });
    },
    onDisable: async (context) => {
      const hook = await context.store.get<StoredHook>(hookStoreKey);
      if (!hook) return;
      await deleteHook(credentials(context.auth), trigger, hook);
      await context.store.delete(hookStoreKey);
    },
    run: async (context) => {
      const hook = await context.store.get<StoredHook>(hookStoreKey);
      if (!hook) throw new ConnectorError(`${definition.name}: ignored a webhook delivery: the trigger has no hook (enable the flow again)`, 401);
      const payload = context.payload as { body?: unknown; rawBody?: unknown; headers?: Record<string, unknown> };
      const raw = rawBodyOf(payload);
      const problem = signatureProblem(hook.secret, payload.headers, raw, queuedTolerance);
      if (problem) throw new ConnectorError(`${definition.name}: ignored a webhook delivery: ${problem}`, 401);
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        throw new ConnectorError(`${definition.name}: ignored a webhook delivery that is not JSON`, 400);
      }
      // A delivery is {type, timestamp, data: event}.
      const data = body !== null && typeof body === 'object' ? (body as { data?: unknown }).data : undefined;
      const event = (data !== null && typeof data === 'object' ? data : body) as Event;
      return ofTrigger(trigger)(event) ? [event] : [];
    },
    test: async (context) => recentOrSample(trigger, context.auth, context.propsValue as Record<string, unknown>),
  });
}

/**
 * Reads the newest events (the manifest's polling endpoint, filtered by the trigger's type and
 * inputs) and emits the ones not seen before, oldest first. The first poll only records what
 * is there (a baseline). Ids are kept in the store, so a restart of Activepieces emits nothing twice.
 */
export async function poll(trigger: TriggerSpec, auth: unknown, values: Record<string, unknown>, store: Store): Promise<Event[]> {
  const events = (await fetchEvents(credentials(auth), trigger, trigger.polling, values, { limit: String(pollLimit) })).filter(ofTrigger(trigger));
  const state = await store.get<PollState>(pollStoreKey);
  const ids = events.map((event) => String(event.id));
  if (!state) {
    await store.put<PollState>(pollStoreKey, { seen: ids.reverse().slice(-rememberedIds) });
    return [];
  }
  const seen = new Set(state.seen);
  const fresh = events.filter((event) => !seen.has(String(event.id))).reverse();
  if (fresh.length > 0) {
    const remembered = [...state.seen, ...fresh.map((event) => String(event.id))].slice(-rememberedIds);
    await store.put<PollState>(pollStoreKey, { seen: remembered });
  }
  return fresh;
}

function pollingTrigger(trigger: TriggerSpec) {
  return createTrigger({
    auth: signageAuth,
    name: `${trigger.id}_polling`,
    displayName: `${trigger.title} (polling)`,
    description: `${trigger.description} Checked on Activepieces' polling schedule rather than instantly.`,
    type: TriggerStrategy.POLLING,
    props: Object.fromEntries(trigger.inputs.map((input) => [input.key, inputProp(input)])),
    sampleData: trigger.sample,
    onEnable: async (context) => {
      await context.store.delete(pollStoreKey);
      await poll(trigger, context.auth, context.propsValue as Record<string, unknown>, context.store);
    },
    onDisable: async (context) => {
      await context.store.delete(pollStoreKey);
    },
    run: async (context) => poll(trigger, context.auth, context.propsValue as Record<string, unknown>, context.store),
    test: async (context) => recentOrSample(trigger, context.auth, context.propsValue as Record<string, unknown>),
  });
}

export const triggers = definition.triggers.flatMap((trigger) => [webhookTrigger(trigger), pollingTrigger(trigger)]);

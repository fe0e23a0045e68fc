import type { Trigger } from '../../manifest/schema.js';
import { MakeExportError } from './names.js';
import { fromOutputFields, triggerParameters, type MakeParameter } from './parameters.js';
import { keyHeaders, valid, listCondition, queryValue, type Json } from './components.js';

/** Make's trigger modules (instant with attach/detach webhooks, polling) from the manifest's triggers. */
/**
 * An instant trigger's webhook: attaching subscribes Make's URL (`POST /v1/hooks`) for the
 * trigger's events and devices and keeps the hook's id to detach it (`DELETE /v1/hooks/{id}`);
 * each delivery `{type, timestamp, data}` becomes one bundle, its `data` (the Event).
 */
export function webhook(trigger: Trigger): { api: Json; parameters: MakeParameter[]; attach: Json; detach: Json } {
  const hook = trigger.hook;
  const body: Json = { ...hook.subscribe.body, target_url: '{{webhook.url}}' };
  for (const field of trigger.inputFields) {
    if (field.hookField) body[field.hookField] = `{{ifempty(parameters.${field.key}; null)}}`;
  }
  const idPath = hook.unsubscribe.path.replace('{id}', '{{webhook.externalHookId}}');
  if (idPath === hook.unsubscribe.path) throw new MakeExportError(`trigger ${trigger.id}: the unsubscribe path ${hook.unsubscribe.path} has no {id}`);
  return {
    api: { output: '{{body.data}}' },
    parameters: triggerParameters(trigger),
    attach: {
      url: hook.subscribe.path,
      method: hook.subscribe.method,
      headers: keyHeaders('api_key'),
      body,
      response: {
        valid: valid('body.id != null and body.secret != null', `${hook.subscribe.method} ${hook.subscribe.path}`, "the hook ('id' and 'secret')"),
        data: { externalHookId: '{{body.id}}' },
      },
    },
    detach: { url: idPath, method: hook.unsubscribe.method, headers: keyHeaders('api_key') },
  };
}

export function instantTriggerCode(trigger: Trigger) {
  return { api: {}, parameters: [], expect: [], interface: fromOutputFields(trigger.outputFields), samples: trigger.sample };
}

/** The most events one poll reads (the connector's largest `limit`). */
export const pollLimit = 500;

/**
 * A polling trigger: the trigger's events newest first. Make remembers the newest `occurred_at`
 * (and id) it has emitted and emits only newer events on the next run, oldest first.
 */
export function pollingTriggerCode(trigger: Trigger) {
  const qs: Record<string, unknown> = { ...trigger.polling.query, limit: pollLimit };
  for (const field of trigger.inputFields) {
    if (field.pollingParam) qs[field.pollingParam] = queryValue(field.key, field.list, field.required);
  }
  return {
    api: {
      url: trigger.polling.path,
      method: trigger.polling.method,
      headers: keyHeaders('api_key'),
      qs,
      response: {
        valid: valid(
          listCondition('body', [trigger.dedupeKey, 'type']),
          `${trigger.polling.method} ${trigger.polling.path}`,
          `a list of events, each with '${trigger.dedupeKey}' and 'type'`,
        ),
        iterate: '{{body}}',
        output: '{{item}}',
        trigger: { type: 'date', order: 'desc', id: `{{item.${trigger.dedupeKey}}}`, date: '{{item.occurred_at}}' },
      },
    },
    epoch: {
      response: {
        limit: 300,
        output: { label: '{{item.device.name}}: {{item.previous_status}} → {{item.status}}', date: '{{item.occurred_at}}' },
      },
    },
    parameters: triggerParameters(trigger),
    expect: [],
    interface: fromOutputFields(trigger.outputFields),
    samples: trigger.sample,
  };
}

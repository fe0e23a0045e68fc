import type { Manifest, OptionSource, Trigger } from '../manifest/schema.js';
import type {
  Definition,
  EventInput,
  Field,
  HookTriggerSpec,
  OptionTriggerSpec,
  PollingTriggerSpec,
} from './zapier-app/lib/types.js';

/**
 * The manifest → `definition.json`: plain data that the app's runtime (`zapier-app/lib`) turns
 * into a Zapier app. Everything platform-specific about naming lives here:
 * - every option source → a hidden trigger `<id>_list` backing dynamic dropdowns; a path
 *   parameter is read from the input field named after it in snake case (`{menuId}` ←
 *   `menu_id`), whose own dropdown is the option source of the parameter's `optionsFrom`;
 * - every trigger → `<id>` (REST hook) and `<id>_polling`; input fields with `optionsFrom`
 *   get `dynamic` dropdowns; nested output keys use Zapier's `__` (`device__name`).
 */

/** `menuId` → `menu_id`. */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The key of the hidden trigger that backs an option source's dropdowns. */
export const optionTriggerKey = (sourceId: string) => `${sourceId}_list`;

/** Zapier's `dynamic` reference: `<trigger>.<value field>.<label field>`. */
const dynamicRef = (sourceId: string) => `${optionTriggerKey(sourceId)}.id.name`;

/** Zapier has no output type for objects and lists: such keys are declared without one. */
const outputType: Record<string, string | undefined> = {
  string: 'string',
  integer: 'integer',
  number: 'number',
  boolean: 'boolean',
  datetime: 'datetime',
};

/** Zapier caps labels at 64 characters and descriptions at 1000. */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Zapier's style guide wants trigger descriptions to start with "Triggers when". */
function triggerDescription(text: string): string {
  return clip(text.replace(/^Fires when\b/, 'Triggers when'), 1000);
}

export function zapierDefinition(manifest: Manifest, baseUrl: string): Definition {
  const sources = new Map(manifest.optionSources.map((source) => [source.id, source]));
  const dynamicFrom = (id: string | undefined) => (id !== undefined && sources.has(id) ? { dynamic: dynamicRef(id) } : {});
  const scopes = manifest.auth.scopes.join(', ');

  const optionTrigger = (source: OptionSource): OptionTriggerSpec => ({
    key: optionTriggerKey(source.id),
    noun: source.title,
    display: {
      label: clip(`${source.title} options`, 64),
      description: clip(source.description ?? `Lists the ${source.title} choices for dropdowns.`, 1000),
      hidden: true,
    },
    path: source.path,
    params: source.params.map((param) => ({ name: param.name, inputKey: snakeCase(param.name), title: param.title })),
    inputFields: source.params.map((param) => ({
      key: snakeCase(param.name),
      label: param.title,
      required: true,
      ...(param.description ? { helpText: clip(param.description, 1000) } : {}),
      ...dynamicFrom(param.optionsFrom),
    })),
    outputFields: [
      { key: 'id', label: `${source.title} ID`, type: 'string' },
      { key: 'name', label: source.title, type: 'string' },
    ],
  });

  const eventShared = (trigger: Trigger) => {
    // The noun is what one item is about: the option source of the first dropdown (Device), else "Event".
    const firstSource = trigger.inputFields.map((field) => field.optionsFrom).find((id) => id !== undefined && sources.has(id));
    const inputs: EventInput[] = trigger.inputFields.map((field) => ({
      key: field.key,
      list: field.list,
      ...(field.pollingParam ? { pollingParam: field.pollingParam } : {}),
      ...(field.hookField ? { hookField: field.hookField } : {}),
    }));
    const inputFields: Field[] = trigger.inputFields.map((field) => ({
      key: field.key,
      label: field.label,
      required: field.required,
      list: field.list,
      ...(field.helpText ? { helpText: clip(field.helpText, 1000) } : {}),
      ...dynamicFrom(field.optionsFrom),
    }));
    const outputFields: Field[] = trigger.outputFields.map((field) => {
      const type = outputType[field.type];
      return {
        key: field.key.split('.').join('__'),
        label: field.label,
        ...(type ? { type } : {}),
        ...(field.key === trigger.dedupeKey ? { primary: true } : {}),
      };
    });
    return {
      noun: firstSource ? sources.get(firstSource)!.title : 'Event',
      eventTypes: [...trigger.eventTypes],
      inputs,
      samples: trigger.hook.sample,
      inputFields,
      outputFields,
      sample: trigger.sample,
    };
  };

  const hookTrigger = (trigger: Trigger): HookTriggerSpec => ({
    key: trigger.id,
    display: { label: clip(trigger.title, 64), description: triggerDescription(trigger.description) },
    ...eventShared(trigger),
    subscribe: trigger.hook.subscribe,
    unsubscribe: trigger.hook.unsubscribe,
    list: trigger.hook.list,
  });

  const pollingTrigger = (trigger: Trigger): PollingTriggerSpec => ({
    key: `${trigger.id}_polling`,
    display: {
      label: clip(`${trigger.title} (polling)`, 64),
      description: clip(`${triggerDescription(trigger.description)} Checked on Zapier's polling schedule rather than instantly.`, 1000),
    },
    ...eventShared(trigger),
    polling: trigger.polling,
  });

  return {
    version: manifest.version,
    connector: { name: manifest.name, defaultBaseUrl: baseUrl, apiKeyHeader: manifest.auth.header },
    authentication: {
      fields: [
        {
          key: 'api_key',
          label: 'API key',
          type: 'password',
          required: true,
          helpText: clip(`A ${manifest.name} API key with the scopes ${scopes}. It is sent as the ${manifest.auth.header} header.`, 1000),
        },
      ],
      test: { method: manifest.auth.test.method, path: manifest.auth.test.path, query: manifest.auth.test.query ?? {} },
      connectionLabel: manifest.auth.connectionLabel ?? null,
    },
    optionTriggers: manifest.optionSources.map(optionTrigger),
    hookTriggers: manifest.triggers.map(hookTrigger),
    pollingTriggers: manifest.triggers.map(pollingTrigger),
  };
}

/** Every trigger key of a definition, in the app's order. */
export function triggerKeys(definition: Definition): string[] {
  return [...definition.optionTriggers, ...definition.hookTriggers, ...definition.pollingTriggers].map((trigger) => trigger.key);
}

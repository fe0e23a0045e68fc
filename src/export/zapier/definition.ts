import type { Manifest, Operation, OperationInput, OptionSource, Trigger } from '../../manifest/schema.js';
import type { Definition, EventInput, Field, HookTriggerSpec, OptionTriggerSpec, PollingTriggerSpec, SearchInput, SearchSpec } from './template/lib/types.js';

/**
 * The manifest → `definition.json`: plain data that the app's runtime (`template/lib`) turns
 * into a Zapier app. Everything platform-specific about naming lives here:
 * - every option source → a hidden trigger `<id>_list` backing dynamic dropdowns; a path
 *   parameter is read from the input field named after it in snake case (`{menuId}` ←
 *   `menu_id`), whose own dropdown is the option source of the parameter's `optionsFrom`;
 * - every trigger → `<id>` (REST hook) and `<id>_polling`; input fields with `optionsFrom`
 *   get `dynamic` dropdowns; nested output keys use Zapier's `__` (`device__name`);
 * - every operation → a search keyed by the operation's id as it is (manifest ids are
 *   snake_case, which Zapier's key pattern accepts); its input fields keep the inputs' keys,
 *   an input filled from another one's choice (`optionParams`) `dependsOn` that one.
 */

/** `menuId` → `menu_id`. */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The key of the hidden trigger that backs an option source's dropdowns. */
export const optionTriggerKey = (sourceId: string) => `${sourceId}_list`;

/** Zapier's `dynamic` reference: `<trigger>.<value field>.<label field>`. */
const dynamicRef = (sourceId: string) => `${optionTriggerKey(sourceId)}.id.name`;

/** Choices per dropdown page (Zapier's guides suggest pages of 20 to 100). */
export const dropdownPageSize = 100;

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
  // The inputs that operations name as the source of a dropdown's path parameter.
  const paramInputs = (source: OptionSource, name: string): string[] => {
    const keys = [snakeCase(name)];
    for (const operation of manifest.operations) {
      for (const input of operation.inputs) {
        const from = input.optionsFrom === source.id ? input.optionParams[name] : undefined;
        if (from !== undefined && !keys.includes(from)) keys.push(from);
      }
    }
    return keys;
  };
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
    params: source.params.map((param) => ({ name: param.name, inputKeys: paramInputs(source, param.name), title: param.title })),
    pageSize: Math.min(dropdownPageSize, source.paging.maxLimit),
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

  const searchInput = (input: OperationInput): SearchInput => ({
    key: input.key,
    label: input.label,
    type: input.type,
    required: input.required,
    list: input.list,
    in: input.in,
    param: input.param ?? input.key,
    ...(input.default !== undefined ? { default: input.default } : {}),
    ...(input.minimum !== undefined ? { minimum: input.minimum } : {}),
    ...(input.maximum !== undefined ? { maximum: input.maximum } : {}),
  });

  const searchField = (input: OperationInput): Field => {
    const range =
      input.minimum !== undefined && input.maximum !== undefined
        ? `From ${input.minimum} to ${input.maximum}.`
        : input.minimum !== undefined
          ? `At least ${input.minimum}.`
          : input.maximum !== undefined
            ? `At most ${input.maximum}.`
            : '';
    const helpText = [input.helpText, range].filter((text) => text).join(' ');
    const dependsOn = [...new Set(Object.values(input.optionParams))];
    return {
      key: input.key,
      label: clip(input.label, 64),
      type: input.type,
      required: input.required,
      ...(input.list ? { list: true } : {}),
      ...(helpText ? { helpText: clip(helpText, 1000) } : {}),
      ...(input.default !== undefined ? { default: String(input.default) } : {}),
      ...dynamicFrom(input.optionsFrom),
      ...(dependsOn.length > 0 ? { dependsOn } : {}),
    };
  };

  const search = (operation: Operation): SearchSpec => ({
    key: operation.id,
    noun: operation.noun,
    display: { label: clip(operation.title, 64), description: clip(operation.description, 1000) },
    request: {
      method: operation.request.method,
      path: operation.request.path,
      auth: operation.request.auth,
      query: operation.request.query,
    },
    inputs: operation.inputs.map(searchInput),
    result: {
      ...(operation.result.items !== undefined ? { items: operation.result.items } : {}),
      single: operation.result.single,
    },
    ...(operation.paging ? { paging: { ...operation.paging } } : {}),
    inputFields: operation.inputs.map(searchField),
    sample: operation.sample,
  });

  return {
    version: manifest.version,
    connector: { name: manifest.name, apiKeyHeader: manifest.auth.header },
    authentication: {
      fields: [
        {
          key: 'base_url',
          label: 'Base URL',
          type: 'string',
          required: true,
          default: baseUrl,
          isNoSecret: true,
          helpText: clip(`The address of your ${manifest.name}, such as ${baseUrl}. Every request of this connection goes there.`, 1000),
        },
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
    searches: manifest.operations.map(search),
  };
}

/** Every trigger key of a definition, in the app's order. */
export function triggerKeys(definition: Definition): string[] {
  return [...definition.optionTriggers, ...definition.hookTriggers, ...definition.pollingTriggers].map((trigger) => trigger.key);
}

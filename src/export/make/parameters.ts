import type { Operation, OperationInput, Trigger } from '../../manifest/schema.js';
import { rpcName } from './names.js';

/**
 * Make parameter and interface arrays (the `parameters`, `expect` and `interface` code of a
 * component) from manifest inputs, output fields and samples.
 */

export type MakeParameter = Record<string, unknown> & { name: string; type: string };

type TriggerInput = Trigger['inputFields'][number];

const scalarType: Record<OperationInput['type'], string> = { string: 'text', integer: 'integer', boolean: 'boolean' };

/** A dropdown: a select whose options come from the option source's RPC. */
function dropdown(base: MakeParameter, sourceId: string, list: boolean): MakeParameter {
  return { ...base, type: 'select', options: `rpc://${rpcName(sourceId)}`, ...(list ? { multiple: true } : {}) };
}

function common(key: string, label: string, required: boolean, helpText: string | undefined): MakeParameter {
  return { name: key, type: 'text', label, required, ...(helpText ? { help: helpText } : {}) };
}

/** One operation input as a Make parameter (before dependent dropdowns are nested). */
function operationParameter(input: OperationInput): MakeParameter {
  const base = common(input.key, input.label, input.required, input.helpText);
  if (input.optionsFrom) return dropdown(base, input.optionsFrom, input.list);
  if (input.list) return { ...base, type: 'array', spec: { name: 'value', type: scalarType[input.type], label: input.label } };
  if (input.in === 'paging') {
    return {
      ...base,
      type: 'uinteger',
      ...(input.default !== undefined ? { default: input.default } : {}),
      validate: { ...(input.minimum !== undefined ? { min: input.minimum } : {}), ...(input.maximum !== undefined ? { max: input.maximum } : {}) },
    };
  }
  return { ...base, type: scalarType[input.type], ...(input.default !== undefined ? { default: input.default } : {}) };
}

/**
 * An operation's inputs as Make parameters. A dropdown that depends on another input (the
 * groups of the chosen menu) is nested under that input's options, as Make requires, so it
 * appears once a menu is chosen and its RPC sees `parameters.<menu input>`.
 */
export function operationParameters(operation: Operation): MakeParameter[] {
  const params = new Map(operation.inputs.map((input) => [input.key, operationParameter(input)]));
  const nestedKeys = new Set<string>();
  for (const input of operation.inputs) {
    for (const parentKey of Object.values(input.optionParams)) {
      const parent = params.get(parentKey);
      const child = params.get(input.key);
      if (!parent || !child || typeof parent.options !== 'string') continue;
      const options = parent.options as string;
      parent.options = { store: options, nested: [child] };
      nestedKeys.add(input.key);
    }
  }
  return operation.inputs.filter((input) => !nestedKeys.has(input.key)).map((input) => params.get(input.key)!);
}

/** A trigger's input fields (the device filter) as Make parameters. */
export function triggerParameters(trigger: Trigger): MakeParameter[] {
  return trigger.inputFields.map((field: TriggerInput) => {
    const base = common(field.key, field.label, field.required, field.helpText);
    if (field.optionsFrom) return dropdown(base, field.optionsFrom, field.list);
    return field.list ? { ...base, type: 'array', spec: { name: 'value', type: 'text', label: field.label } } : base;
  });
}

const isoDate = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function startCase(key: string): string {
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** What a sample value looks like as a Make interface entry. */
function fromValue(name: string, value: unknown): MakeParameter {
  const label = startCase(name);
  if (typeof value === 'boolean') return { name, type: 'boolean', label };
  if (typeof value === 'number') return { name, type: Number.isInteger(value) ? 'integer' : 'number', label };
  if (typeof value === 'string') return { name, type: isoDate.test(value) ? 'date' : 'text', label };
  if (Array.isArray(value)) {
    const first = value[0];
    const spec = first !== null && typeof first === 'object' && !Array.isArray(first) ? fromSample(first as Record<string, unknown>) : { type: 'text' };
    return { name, type: 'array', label, spec };
  }
  if (value !== null && typeof value === 'object') return { name, type: 'collection', label, spec: fromSample(value as Record<string, unknown>) };
  return { name, type: 'text', label };
}

/** A Make interface that describes an operation's records, read off its manifest sample. */
export function fromSample(sample: Record<string, unknown>): MakeParameter[] {
  return Object.entries(sample).map(([name, value]) => fromValue(name, value));
}

const fieldType: Record<Trigger['outputFields'][number]['type'], string> = {
  string: 'text',
  integer: 'integer',
  number: 'number',
  boolean: 'boolean',
  datetime: 'date',
  object: 'collection',
  array: 'array',
};

/** A trigger's output fields (dotted keys such as `device.name`) as a nested Make interface. */
export function fromOutputFields(fields: Trigger['outputFields']): MakeParameter[] {
  const root: MakeParameter[] = [];
  for (const field of fields) {
    const parts = field.key.split('.');
    let level = root;
    for (const part of parts.slice(0, -1)) {
      let parent = level.find((entry) => entry.name === part);
      if (!parent) {
        parent = { name: part, type: 'collection', label: startCase(part), spec: [] };
        level.push(parent);
      }
      level = parent.spec as MakeParameter[];
    }
    level.push({ name: parts[parts.length - 1]!, type: fieldType[field.type], label: field.label });
  }
  return root;
}

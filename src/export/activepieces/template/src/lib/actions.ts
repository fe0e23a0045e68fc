import { createAction, Property } from '@activepieces/pieces-framework';
import { definition } from '../definition';
import { signageAuth } from './auth';
import { call, ConnectorError, credentials, fillPath, isEmpty, toList } from './connector';
import { recordsProblem } from './shape';
import { dropdownProp } from './options';
import type { OperationInputSpec, OperationSpec } from './types';

/**
 * Every operation of the manifest as an action named by its id, with one prop per input
 * (named by the input's key). Inputs with an option source are dropdowns; the groups
 * dropdown follows the chosen menu through `refreshers`.
 */

function inputProp(input: OperationInputSpec) {
  const description = input.helpText ?? undefined;
  const base = { displayName: input.label, ...(description ? { description } : {}), required: input.required };
  if (input.optionsFrom) return dropdownProp({ ...input, optionsFrom: input.optionsFrom });
  if (input.type === 'boolean') {
    if (input.required) return Property.Checkbox({ ...base, ...(typeof input.default === 'boolean' ? { defaultValue: input.default } : {}) });
    // Three states: yes, no, or not given (no filter).
    return Property.StaticDropdown<boolean, boolean>({
      ...base,
      options: { options: [{ label: 'Yes', value: true }, { label: 'No', value: false }] },
    });
  }
  if (input.type === 'integer') return Property.Number({ ...base, ...(typeof input.default === 'number' ? { defaultValue: input.default } : {}) });
  if (input.list) return Property.Array({ ...base });
  return Property.ShortText({ ...base, ...(typeof input.default === 'string' ? { defaultValue: input.default } : {}) });
}

/** A query parameter's text, or undefined when the input is empty. */
function queryValue(input: OperationInputSpec, value: unknown): string | undefined {
  if (input.list) {
    const items = toList(value);
    return items.length > 0 ? items.join(',') : undefined;
  }
  if (isEmpty(value)) return undefined;
  return String(value);
}

function limitOf(operation: OperationSpec, values: Record<string, unknown>): number {
  const input = operation.inputs.find((candidate) => candidate.key === operation.paging?.limitInput);
  const raw = values[input?.key ?? ''];
  const limit = isEmpty(raw) ? Number(input?.default ?? operation.paging?.maxSize ?? 100) : Number(raw);
  if (!Number.isInteger(limit)) throw new ConnectorError(`${definition.name}: ${input?.label ?? 'Limit'} must be a whole number`, null);
  const min = input?.minimum ?? 1;
  const max = input?.maximum ?? Number.MAX_SAFE_INTEGER;
  if (limit < min || limit > max) throw new ConnectorError(`${definition.name}: ${input?.label ?? 'Limit'} must be between ${min} and ${max}`, null);
  return limit;
}

function recordsOf(operation: OperationSpec, body: unknown): unknown[] | unknown {
  if (!operation.result.items) return body;
  const records = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[operation.result.items] : undefined;
  return Array.isArray(records) ? records : [];
}

/** Runs an operation with the given input values: its records, or the one record. */
export async function runOperation(operation: OperationSpec, auth: unknown, values: Record<string, unknown>): Promise<unknown> {
  const creds = credentials(auth);
  const pathValues: Record<string, unknown> = {};
  const query: Record<string, string> = { ...operation.request.query };
  for (const input of operation.inputs) {
    const value = values[input.key];
    if (input.required && isEmpty(value)) throw new ConnectorError(`${definition.name}: ${input.label} is required`, null);
    if (input.in === 'path') pathValues[input.key] = value;
    if (input.in === 'query') {
      const text = queryValue(input, value);
      if (text !== undefined) query[input.param ?? input.key] = text;
    }
  }
  const path = fillPath(operation.request.path, pathValues);
  const keyIn = operation.request.auth;
  // Records with an id, where the operation says they are; never an empty list for a bad answer.
  const check = (body: unknown) => recordsProblem(body, operation.result.items, operation.result.single);

  if (operation.paging) {
    const paging = operation.paging;
    const limit = limitOf(operation, values);
    const records: unknown[] = [];
    // One page size for every page: the page number counts pages of that size.
    const size = Math.min(paging.maxSize, limit);
    let read = 0;
    for (let page = 1; records.length < limit; page += 1) {
      const response = await call(creds, { method: 'GET', path, keyIn, query: { ...query, [paging.page]: String(page), [paging.size]: String(size) }, check });
      const batch = recordsOf(operation, response.body);
      const items = Array.isArray(batch) ? batch : [];
      read += items.length;
      records.push(...items.slice(0, limit - records.length));
      const total = Number((response.body as Record<string, unknown> | null)?.[paging.total]);
      if (items.length < size || (Number.isFinite(total) && read >= total)) break;
    }
    return records;
  }

  const response = await call(creds, { method: 'GET', path, keyIn, query, check });
  const records = recordsOf(operation, response.body);
  if (!operation.result.single) return records;
  if (!Array.isArray(records)) return records;
  if (records.length === 0) throw new ConnectorError(`${definition.name}: ${operation.result.notFound ?? `${operation.noun} not found`}`, 404);
  return records[0];
}

export const actions = definition.operations.map((operation) =>
  createAction({
    auth: signageAuth,
    name: operation.id,
    displayName: operation.title,
    description: operation.description,
    props: Object.fromEntries(operation.inputs.map((input) => [input.key, inputProp(input)])),
    run: async (context) => runOperation(operation, context.auth, context.propsValue as Record<string, unknown>),
  }),
);

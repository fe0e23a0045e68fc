import type { Manifest, Operation, OptionSource } from '../../manifest/schema.js';
import { MakeExportError, rpcName } from './names.js';
import { fromSample, operationParameters, type MakeParameter } from './parameters.js';

/**
 * The code of each Make component (Make's "communication" = `api`, `parameters`, `expect`,
 * `interface`, `samples`, `epoch`, `attach`, `detach`) from the manifest, as JSON values in
 * Make's IML: `{{connection.api_key}}`, `{{parameters.device_id}}`, `{{body.data}}`…
 */

export type Json = Record<string, unknown>;

/** How a request carries the key: the device area reads a Bearer token, /v1 reads X-API-Key. */
export function keyHeaders(auth: 'api_key' | 'bearer', secret = 'connection.api_key'): Record<string, string> {
  return auth === 'bearer' ? { Authorization: `Bearer {{${secret}}}` } : { 'X-API-Key': `{{${secret}}}` };
}

/** Where the key may show up in Make's logs: both headers are masked. */
const sanitize = ['request.headers.x-api-key', 'request.headers.authorization'];

/** The connector's `{message}` error body, with the HTTP status. */
const errorMessage = "[{{statusCode}}] {{ifempty(body.message; 'The connector answered HTTP ' + statusCode)}}";

/** How long Make waits for the connector's answer (Make's `timeout` directive, in ms). */
export const requestTimeoutMs = 30_000;

/**
 * A `response.valid` directive (Make's format: `{condition, message, type}`): an answer the
 * condition rejects (a proxy's page, an object where a list belongs, records without an id)
 * fails the module with the message, never becomes an empty result or a bad bundle. `what`
 * says what the answer should have been.
 */
export function valid(condition: string, request: string, what: string): Json {
  return {
    condition: `{{${condition}}}`,
    message: `Unexpected answer from the connector to ${request}: expected ${what}. Is the base URL the connector's?`,
    type: 'DataError',
  };
}

/** A list at `path` whose entries each have `fields` (the IML `map` leaves out entries without one). */
export function listCondition(path: string, fields: string[]): string {
  return [`${path} != null`, ...fields.map((field) => `length(${path}) = length(map(${path}; '${field}'))`)].join(' and ');
}

/**
 * The base every module, RPC and webhook request starts from: the connection's base URL,
 * errors carrying the connector's message (a 401 asks to fix the connection), masked keys, a
 * body parsed as JSON (Make fails a request whose body is not), and a 30 s timeout.
 */
export function base(): Json {
  return {
    baseUrl: '{{connection.base_url}}',
    timeout: requestTimeoutMs,
    response: {
      type: 'json',
      error: {
        message: errorMessage,
        401: { message: errorMessage, type: 'InvalidAccessTokenError' },
        429: { message: errorMessage, type: 'RateLimitError' },
      },
    },
    log: { sanitize },
  };
}

/** The connection: the base URL and the key, checked with the auth test and labelled. */
export function connection(manifest: Manifest, defaultBaseUrl: string): { api: Json; parameters: MakeParameter[] } {
  const test = manifest.auth.test;
  const label = manifest.auth.connectionLabel;
  return {
    api: {
      url: `{{parameters.base_url}}${test.path}`,
      method: test.method,
      headers: { [manifest.auth.header]: '{{parameters.api_key}}' },
      // No `timeout` here: Make's format allows it in the base only, which the connection does
      // not use; the connection test waits Make's own default.
      response: {
        type: 'json',
        valid: valid('body.key != null', `${test.method} ${test.path}`, "an object with the key ('key')"),
        ...(label ? { metadata: { type: 'text', value: `{{body.${label}}}` } } : {}),
        error: { message: errorMessage },
      },
      log: { sanitize },
    },
    parameters: [
      {
        name: 'base_url',
        type: 'url',
        label: 'Base URL',
        help: `The connector's address, without a trailing slash, for example ${defaultBaseUrl}.`,
        required: true,
        default: defaultBaseUrl,
      },
      {
        name: 'api_key',
        type: 'password',
        label: 'API key',
        help: `A key of the connector with the scopes ${manifest.auth.scopes.join(', ')}.`,
        required: true,
      },
    ],
  };
}

/**
 * The input key each option-source parameter is read from in the RPC (`menuId` ← `menu_id`):
 * the key the operations map it from, else the parameter's name in snake case.
 */
export function sourceParamKeys(manifest: Manifest, source: OptionSource): Record<string, string> {
  const keys: Record<string, string> = {};
  for (const param of source.params) {
    const mapped = new Set(
      manifest.operations
        .flatMap((op) => op.inputs.filter((input) => input.optionsFrom === source.id).map((input) => input.optionParams[param.name]))
        .filter((key): key is string => !!key),
    );
    if (mapped.size > 1)
      throw new MakeExportError(
        `option source ${source.id}: its parameter ${param.name} comes from different inputs (${[...mapped].join(', ')}); Make's RPC reads one`,
      );
    keys[param.name] = [...mapped][0] ?? param.name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
  }
  return keys;
}

/** Page size of the dropdown RPCs, and the most choices a dropdown loads (Make pages up to it). */
export const rpcPageSize = 100;
export const rpcChoiceLimit = 1000;

/**
 * An option source as a dynamic-options RPC: the connector's `{results, paginationToken}`
 * answer (`format=n8n`), searched with `q` and paged with `limit`/`cursor` until the token is gone.
 */
export function rpc(manifest: Manifest, source: OptionSource): { api: Json; parameters: MakeParameter[] } {
  const keys = sourceParamKeys(manifest, source);
  const url = source.path.replace(/\{([A-Za-z0-9]+)\}/g, (_match, name: string) => `{{parameters.${keys[name]}}}`);
  const parameters: MakeParameter[] = source.params.map((param) => ({
    name: keys[param.name]!,
    type: param.optionsFrom ? 'select' : 'text',
    label: param.title,
    required: true,
    ...(param.optionsFrom ? { options: `rpc://${rpcName(param.optionsFrom)}` } : {}),
  }));
  if (source.search) parameters.push({ name: 'q', type: 'text', label: 'Search', help: `Part of the ${source.title.toLowerCase()} name.` });
  return {
    api: {
      url,
      method: 'GET',
      headers: keyHeaders('api_key'),
      qs: {
        format: 'n8n',
        limit: Math.min(rpcPageSize, source.paging.maxLimit),
        ...(source.search ? { q: '{{parameters.q}}' } : {}),
      },
      response: {
        valid: valid(listCondition('body.results', ['value']), `GET ${source.path}`, "choices ('results', each with a 'value')"),
        limit: rpcChoiceLimit,
        iterate: '{{body.results}}',
        output: { label: '{{item.name}}', value: '{{item.value}}' },
      },
      pagination: {
        qs: { cursor: '{{body.paginationToken}}' },
        condition: '{{body.paginationToken}}',
      },
    },
    parameters,
  };
}

/**
 * A query value from a module parameter: lists go comma-separated, as the connector reads them.
 * An optional one that is empty stays out of the query (`undefined` is dropped), since the
 * connector rejects an empty filter.
 */
export function queryValue(key: string, list: boolean, required: boolean): string {
  const value = list ? `join(parameters.${key}; ',')` : `parameters.${key}`;
  return required ? `{{${value}}}` : `{{ifempty(${value}; undefined)}}`;
}

/**
 * The page-size expression of a paged operation: pages of the limit's default size (100
 * devices; at most the connector's largest page), smaller when the limit is, so that Make
 * requests the next page while the module still wants more.
 */
function pageSize(operation: Operation): { size: string; limit: string } {
  const paging = operation.paging!;
  const input = operation.inputs.find((candidate) => candidate.key === paging.limitInput);
  const fallback = typeof input?.default === 'number' ? input.default : paging.maxSize;
  const limit = `ifempty(parameters.${paging.limitInput}; ${fallback})`;
  return { size: `min(${limit}; ${Math.min(fallback, paging.maxSize)})`, limit };
}

/** An operation as a search module: its request, paging up to `limit`, one bundle per record. */
export function searchModule(operation: Operation): Json {
  const url = operation.request.path.replace(/\{([a-z][a-z0-9_]*)\}/g, (_match, key: string) => `{{parameters.${key}}}`);
  const qs: Record<string, unknown> = { ...operation.request.query };
  for (const input of operation.inputs) {
    if (input.in === 'query') qs[input.param ?? input.key] = queryValue(input.key, input.list, input.required);
  }
  const request = `${operation.request.method} ${operation.request.path}`;
  const response: Json = operation.result.items
    ? { valid: valid(listCondition(`body.${operation.result.items}`, ['id']), request, `records in '${operation.result.items}', each with an 'id'`) }
    : {
        valid: valid(
          operation.result.single ? 'body.id != null' : listCondition('body', ['id']),
          request,
          operation.result.single ? "a record with an 'id'" : "a list of records, each with an 'id'",
        ),
      };
  const api: Json = { url, method: operation.request.method, headers: keyHeaders(operation.request.auth), qs, response };
  if (operation.result.items) {
    response.iterate = `{{body.${operation.result.items}}}`;
    response.output = '{{item}}';
    if (operation.result.single) response.limit = 1;
  } else {
    response.output = '{{body}}';
  }
  if (operation.paging && operation.result.items) {
    const { size, limit } = pageSize(operation);
    qs[operation.paging.size] = `{{${size}}}`;
    response.limit = `{{${limit}}}`;
    api.pagination = {
      qs: { [operation.paging.page]: '{{pagination.page}}' },
      // A full page means there may be more; a short or empty one is the last.
      condition: `{{length(body.${operation.result.items}) = ${size}}}`,
    };
  }
  return api;
}

export function searchModuleCode(operation: Operation) {
  return {
    api: searchModule(operation),
    parameters: [],
    expect: operationParameters(operation),
    interface: fromSample(operation.sample),
    samples: operation.sample,
  };
}

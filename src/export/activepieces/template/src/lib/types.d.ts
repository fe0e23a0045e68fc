/**
 * The shape of `src/definition.ts`, which the exporter generates from the connector's manifest.
 * Everything the piece shows (auth, dropdowns, actions, triggers) is built from it; nothing
 * about an endpoint is written by hand in the piece's code.
 */

export interface Endpoint {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
}

export interface Definition {
  name: string;
  version: string;
  description: string;
  /** The base URL given at export: the connection's default. */
  defaultBaseUrl: string;
  apiKeyHeader: string;
  auth: {
    test: Endpoint;
    /** A dotted path into the test call's answer that names the account (`account.name`). */
    connectionLabel: string | null;
    scopes: string[];
  };
  optionSources: OptionSourceSpec[];
  operations: OperationSpec[];
  triggers: TriggerSpec[];
}

export interface OptionSourceSpec {
  id: string;
  title: string;
  description: string;
  path: string;
  /** Path parameters: `{menuId}` and the option source that fills it. */
  params: Array<{ name: string; title: string; optionsFrom: string | null }>;
  /** The most choices the server returns in one page. */
  maxLimit: number;
}

export interface OperationInputSpec {
  key: string;
  label: string;
  helpText: string | null;
  type: 'string' | 'integer' | 'boolean';
  required: boolean;
  list: boolean;
  in: 'path' | 'query' | 'paging';
  /** The query parameter's name (default: the key). */
  param: string | null;
  default: string | number | boolean | null;
  minimum: number | null;
  maximum: number | null;
  optionsFrom: string | null;
  /** Option source path parameter → the input that fills it (`{menuId: 'menu_id'}`). */
  optionParams: Record<string, string>;
}

export interface OperationSpec {
  id: string;
  title: string;
  description: string;
  noun: string;
  request: { method: 'GET'; path: string; auth: 'api_key' | 'bearer'; query: Record<string, string> };
  inputs: OperationInputSpec[];
  result: { items: string | null; single: boolean; notFound: string | null };
  paging: { page: string; size: string; maxSize: number; total: string; limitInput: string } | null;
  sample: Record<string, unknown>;
}

export interface TriggerInputSpec {
  key: string;
  label: string;
  helpText: string | null;
  required: boolean;
  list: boolean;
  optionsFrom: string | null;
  /** The polling endpoint's query parameter and the hook body field that carry the value. */
  pollingParam: string | null;
  hookField: string | null;
}

export interface TriggerSpec {
  id: string;
  title: string;
  description: string;
  eventTypes: string[];
  inputs: TriggerInputSpec[];
  /** Newest events first, filtered by the inputs' polling parameters. */
  polling: Endpoint;
  hook: { subscribe: Endpoint; unsubscribe: Endpoint; list: Endpoint; sample: Endpoint };
  sample: Record<string, unknown>;
}

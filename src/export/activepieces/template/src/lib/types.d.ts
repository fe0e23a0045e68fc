/**
 * The shape of `src/definition.ts`, which the exporter generates from the connector's manifest.
 * Everything the piece shows (auth, dropdowns, actions, triggers) is built from it; nothing
 * about an endpoint is written by hand in the piece's code. The parts taken from the manifest
 * have the manifest's own types (manifest.d.ts, generated from its schema), with `null` for
 * what the manifest leaves out.
 */

import type { Endpoint, OperationInput, OperationPaging, OperationRequest, OperationResult, TriggerInput } from './manifest';

export type { Endpoint };

/** Every optional property of `T` present, `null` when it is absent. */
export type Nulled<T> = { [K in keyof T]-?: undefined extends T[K] ? Exclude<T[K], undefined> | null : T[K] };

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

/**
 * `param`: the query parameter's name (default: the key); `optionParams`: option source path
 * parameter → the input that fills it (`{menuId: 'menu_id'}`).
 */
export type OperationInputSpec = Nulled<OperationInput>;

export interface OperationSpec {
  id: string;
  title: string;
  description: string;
  noun: string;
  request: OperationRequest;
  inputs: OperationInputSpec[];
  result: Nulled<OperationResult>;
  paging: OperationPaging | null;
  sample: Record<string, unknown>;
}

/** `pollingParam` and `hookField`: the polling endpoint's query parameter and the hook body field that carry the value. */
export type TriggerInputSpec = Nulled<TriggerInput>;

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

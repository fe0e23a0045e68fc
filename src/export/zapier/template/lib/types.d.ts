/**
 * The shape of `definition.json`: the data `npm run export -- zapier` derives from the
 * connector manifest. The files under lib/ give it behaviour; nothing here is code. The parts
 * taken from the manifest as they are have the manifest's own types (manifest.d.ts, generated
 * from its schema).
 */

import type { Endpoint, OperationInput, OperationPaging, OperationRequest, OperationResult, TriggerInput } from './manifest';

export type { Endpoint };
export type HttpMethod = Endpoint['method'];

/** A Zapier input, output or auth field, passed to Zapier as it is. */
export type Field = Record<string, unknown> & { key: string };

export interface Display {
  label: string;
  description: string;
  hidden?: boolean;
}

export interface ConnectorSettings {
  /** Shown in error messages and as the fallback connection label. */
  name: string;
  /** The header the API key is sent in. */
  apiKeyHeader: string;
}

export interface Authentication {
  /** `base_url` (default: the base URL given at export) and `api_key`; every request goes to the connection's `base_url`. */
  fields: Field[];
  test: Endpoint;
  /** A dotted path into the auth test's answer (`account.name`), or null. */
  connectionLabel: string | null;
}

/**
 * A path parameter of an option source, read from the first of the input fields `inputKeys`
 * that has a value: its snake-case name (`menuId` ← `menu_id`), then the inputs that
 * operations name for it.
 */
export interface OptionParam {
  name: string;
  inputKeys: string[];
  title: string;
}

/** A hidden trigger that fills dynamic dropdowns from one option source. */
export interface OptionTriggerSpec {
  key: string;
  noun: string;
  display: Display;
  path: string;
  params: OptionParam[];
  /** Choices per page: the first page, then one more per "load more". */
  pageSize: number;
  inputFields: Field[];
  outputFields: Field[];
}

/** How one trigger input maps onto the polling query and the hook subscription body. */
export type EventInput = Pick<TriggerInput, 'key' | 'list' | 'pollingParam' | 'hookField'>;

interface EventTriggerBase {
  key: string;
  noun: string;
  display: Display;
  eventTypes: string[];
  inputs: EventInput[];
  /** The endpoint that builds sample events from the user's own devices. */
  samples: Endpoint;
  inputFields: Field[];
  outputFields: Field[];
  sample: Record<string, unknown>;
}

/** A REST-hook trigger: subscribe, unsubscribe, and recent events for "load samples". */
export interface HookTriggerSpec extends EventTriggerBase {
  subscribe: Endpoint;
  unsubscribe: Endpoint;
  list: Endpoint;
}

export interface PollingTriggerSpec extends EventTriggerBase {
  polling: Endpoint;
}

/**
 * How one operation input reaches the request: `path` fills `{key}` of the path, `query` the
 * query parameter `param` (always set here), `paging` the limit of a paged list; a `list` is
 * several values, sent comma-separated as one query parameter.
 */
export type SearchInput = Pick<OperationInput, 'key' | 'label' | 'type' | 'required' | 'list' | 'in' | 'default' | 'minimum' | 'maximum'> & { param: string };

/** A page-numbered list: every page is read until the limit input is reached or the list ends. */
export type SearchPaging = OperationPaging;

/**
 * A Zapier search from a manifest operation. It always returns an array: the records of a
 * list, or the one record (none when it is not found).
 */
export interface SearchSpec {
  key: string;
  noun: string;
  display: Display;
  /** `auth`: `bearer` sends the key in `Authorization: Bearer`, `api_key` in the connector's key header. */
  request: OperationRequest;
  inputs: SearchInput[];
  /** `items`: the field of the answer that holds the records; absent: the answer is the record. */
  result: Pick<OperationResult, 'items' | 'single'>;
  paging?: SearchPaging;
  inputFields: Field[];
  sample: Record<string, unknown>;
}

export interface Definition {
  /** The app's version (the manifest's). */
  version: string;
  connector: ConnectorSettings;
  authentication: Authentication;
  optionTriggers: OptionTriggerSpec[];
  hookTriggers: HookTriggerSpec[];
  pollingTriggers: PollingTriggerSpec[];
  searches: SearchSpec[];
}

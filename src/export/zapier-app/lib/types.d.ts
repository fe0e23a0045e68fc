/**
 * The shape of `definition.json`: the data `npm run export -- zapier` derives from the
 * connector manifest. The files under lib/ give it behaviour; nothing here is code.
 */

export type HttpMethod = 'GET' | 'POST' | 'DELETE';

/** One connector call: `{name}` segments of the path are filled from input values. */
export interface Endpoint {
  method: HttpMethod;
  path: string;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
}

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
  /** The base URL given at export; `CONNECTOR_BASE_URL` overrides it at run time. */
  defaultBaseUrl: string;
  /** The header the API key is sent in. */
  apiKeyHeader: string;
}

export interface Authentication {
  fields: Field[];
  test: Endpoint;
  /** A dotted path into the auth test's answer (`account.name`), or null. */
  connectionLabel: string | null;
}

/** A path parameter of an option source, read from the input field `inputKey`. */
export interface OptionParam {
  name: string;
  inputKey: string;
  title: string;
}

/** A hidden trigger that fills dynamic dropdowns from one option source. */
export interface OptionTriggerSpec {
  key: string;
  noun: string;
  display: Display;
  path: string;
  params: OptionParam[];
  inputFields: Field[];
  outputFields: Field[];
}

/** How one trigger input maps onto the polling query and the hook subscription body. */
export interface EventInput {
  key: string;
  list: boolean;
  pollingParam?: string;
  hookField?: string;
}

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

export interface Definition {
  /** The app's version (the manifest's). */
  version: string;
  connector: ConnectorSettings;
  authentication: Authentication;
  optionTriggers: OptionTriggerSpec[];
  hookTriggers: HookTriggerSpec[];
  pollingTriggers: PollingTriggerSpec[];
}

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest, OptionSource, Trigger } from '../manifest/schema.js';
import { projectRoot } from '../paths.js';

/**
 * The Zapier exporter: turns the platform-neutral manifest (`manifests/connector.json`) into a
 * self-contained CommonJS Zapier platform app (the format `zapier-platform-core` runs and
 * `zapier-platform-schema` validates), ready for `npm install && zapier push`.
 *
 * Everything comes from the manifest:
 * - `auth` → custom auth with one `api_key` password field, the test call and the connection label;
 * - every option source → a hidden trigger `<id>_list` that backs dynamic dropdowns
 *   (`{id, name}` from `?format=objects`); a path parameter is read from the input field named
 *   after it in snake case (`{menuId}` ← `bundle.inputData.menu_id`), whose own dropdown is the
 *   option source of the parameter's `optionsFrom`;
 * - every trigger → `<id>`, a REST hook (subscribe, unsubscribe, list for samples), and
 *   `<id>_polling`, a polling trigger; input fields with `optionsFrom` get `dynamic` dropdowns.
 *
 * The generated code reads `CONNECTOR_BASE_URL` at run time (a Zapier environment variable, or
 * the test's process env) and falls back to the base URL given at export.
 */

export interface ZapierCore {
  /** Exact `zapier-platform-core` version the app depends on (and reports as platformVersion). */
  version: string;
  /** `engines.node` of the generated package. */
  nodeEngine: string;
}

export interface ZapierExportOptions {
  /** The connector's public base URL, baked in as the default (no trailing slash needed). */
  baseUrl: string;
  /** Defaults to the `zapier-platform-core` installed in this project. */
  core?: ZapierCore;
}

export class ZapierExportError extends Error {}

/** Zapier's version pattern (VersionSchema): stricter than semver. */
const zapierVersion = /^(?:0|[1-9]\d{0,2})\.(?:0|[1-9]\d{0,2})\.(?:0|[1-9]\d{0,2})(?:-(?=.{1,12}$)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)?$/;

/** The `zapier-platform-core` this project has installed (else its declared range, made exact). */
export function installedZapierCore(root = projectRoot): ZapierCore {
  const installed = join(root, 'node_modules', 'zapier-platform-core', 'package.json');
  if (existsSync(installed)) {
    const pkg = JSON.parse(readFileSync(installed, 'utf8')) as { version: string; engines?: { node?: string } };
    return { version: pkg.version, nodeEngine: pkg.engines?.node ?? '>=18' };
  }
  const own = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string>; dependencies?: Record<string, string> };
  const range = own.devDependencies?.['zapier-platform-core'] ?? own.dependencies?.['zapier-platform-core'];
  const exact = range?.match(/\d+\.\d+\.\d+/)?.[0];
  if (!exact) throw new ZapierExportError('zapier-platform-core is not installed and not declared in package.json; run `npm ci` first');
  return { version: exact, nodeEngine: '>=18' };
}

/** `menuId` → `menu_id`. */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** The key of the hidden trigger that backs an option source's dropdowns. */
export const optionTriggerKey = (sourceId: string) => `${sourceId}_list`;

/** Zapier's `dynamic` reference: `<trigger>.<value field>.<label field>`. */
const dynamicRef = (sourceId: string) => `${optionTriggerKey(sourceId)}.id.name`;

const outputType: Record<string, string | undefined> = {
  string: 'string',
  integer: 'integer',
  number: 'number',
  boolean: 'boolean',
  datetime: 'datetime',
  // Zapier has no output type for objects and lists: the key is declared without one.
  object: undefined,
  array: undefined,
};

/** Generates the app: relative path → file text. */
export function zapierApp(manifest: Manifest, options: ZapierExportOptions): Map<string, string> {
  const core = options.core ?? installedZapierCore();
  const baseUrl = checkBaseUrl(options.baseUrl);
  if (!zapierVersion.test(manifest.version)) {
    throw new ZapierExportError(`manifest version ${manifest.version} is not a Zapier app version (x.y.z with parts up to 999, optional short -label)`);
  }
  const sources = new Map(manifest.optionSources.map((source) => [source.id, source]));

  const files = new Map<string, string>();
  files.set('package.json', `${JSON.stringify(packageJson(manifest, core), null, 2)}\n`);
  files.set('lib/connector.js', connectorLib(manifest, baseUrl));
  files.set('lib/triggers.js', triggersLib());

  const triggerKeys: string[] = [];
  for (const source of manifest.optionSources) {
    const key = optionTriggerKey(source.id);
    files.set(`triggers/${key}.js`, moduleFile(manifest, 'optionsTrigger', optionTriggerSpec(source, sources)));
    triggerKeys.push(key);
  }
  for (const trigger of manifest.triggers) {
    const shared = eventTriggerShared(trigger, sources);
    files.set(`triggers/${trigger.id}.js`, moduleFile(manifest, 'hookTrigger', hookTriggerSpec(trigger, shared)));
    files.set(`triggers/${trigger.id}_polling.js`, moduleFile(manifest, 'pollingTrigger', pollingTriggerSpec(trigger, shared)));
    triggerKeys.push(trigger.id, `${trigger.id}_polling`);
  }
  const clash = triggerKeys.find((key, i) => triggerKeys.indexOf(key) !== i);
  if (clash) throw new ZapierExportError(`two Zapier triggers would both be called ${clash}; rename the trigger or option source`);

  files.set('index.js', indexFile(manifest, triggerKeys));
  files.set('README.md', readme(manifest, baseUrl, triggerKeys));
  return files;
}

function checkBaseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ZapierExportError(`base URL ${JSON.stringify(raw)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ZapierExportError(`base URL ${raw} must be http:// or https://`);
  if (url.search || url.hash || url.username || url.password) throw new ZapierExportError(`base URL ${raw} must not have a query, fragment or credentials`);
  return url.toString().replace(/\/+$/, '');
}

function packageJson(manifest: Manifest, core: ZapierCore) {
  return {
    name: `${slug(manifest.name)}-zapier`,
    version: manifest.version,
    description: manifest.description,
    main: 'index.js',
    private: true,
    scripts: { validate: 'zapier validate', push: 'zapier push' },
    engines: { node: core.nodeEngine },
    dependencies: { 'zapier-platform-core': core.version },
  };
}

function slug(name: string): string {
  return (
    name
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'connector'
  );
}

/** Zapier's style guide wants trigger descriptions to start with "Triggers when". */
function triggerDescription(text: string): string {
  return clip(text.replace(/^Fires when\b/, 'Triggers when'), 1000);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

// ---------------------------------------------------------------------------------------------
// Trigger specs: plain data, embedded as JSON in each trigger file.

interface EventShared {
  noun: string;
  eventTypes: string[];
  inputs: Array<{ key: string; list: boolean; pollingParam?: string; hookField?: string }>;
  inputFields: Array<Record<string, unknown>>;
  outputFields: Array<Record<string, unknown>>;
  sample: Record<string, unknown>;
}

function optionTriggerSpec(source: OptionSource, sources: Map<string, OptionSource>) {
  const params = source.params.map((param) => ({ name: param.name, inputKey: snakeCase(param.name), title: param.title }));
  const inputFields = source.params.map((param) => ({
    key: snakeCase(param.name),
    label: param.title,
    required: true,
    ...(param.description ? { helpText: clip(param.description, 1000) } : {}),
    ...(param.optionsFrom && sources.has(param.optionsFrom) ? { dynamic: dynamicRef(param.optionsFrom) } : {}),
  }));
  return {
    key: optionTriggerKey(source.id),
    noun: source.title,
    display: {
      label: clip(`${source.title} options`, 64),
      description: clip(source.description ?? `Lists the ${source.title} choices for dropdowns.`, 1000),
      hidden: true,
    },
    path: source.path,
    params,
    inputFields,
    outputFields: [
      { key: 'id', label: `${source.title} ID`, type: 'string' },
      { key: 'name', label: source.title, type: 'string' },
    ],
  };
}

function eventTriggerShared(trigger: Trigger, sources: Map<string, OptionSource>): EventShared {
  // The noun is what one item is about: the option source of the first dropdown (Device), else "Event".
  const firstSource = trigger.inputFields.map((field) => field.optionsFrom).find((id) => id !== undefined && sources.has(id));
  const noun = firstSource ? sources.get(firstSource)!.title : 'Event';
  return {
    noun,
    eventTypes: [...trigger.eventTypes],
    inputs: trigger.inputFields.map((field) => ({
      key: field.key,
      list: field.list,
      ...(field.pollingParam ? { pollingParam: field.pollingParam } : {}),
      ...(field.hookField ? { hookField: field.hookField } : {}),
    })),
    inputFields: trigger.inputFields.map((field) => ({
      key: field.key,
      label: field.label,
      required: field.required,
      list: field.list,
      ...(field.helpText ? { helpText: clip(field.helpText, 1000) } : {}),
      ...(field.optionsFrom && sources.has(field.optionsFrom) ? { dynamic: dynamicRef(field.optionsFrom) } : {}),
    })),
    outputFields: trigger.outputFields.map((field) => {
      const type = outputType[field.type];
      return {
        key: field.key.split('.').join('__'),
        label: field.label,
        ...(type ? { type } : {}),
        ...(field.key === trigger.dedupeKey ? { primary: true } : {}),
      };
    }),
    sample: trigger.sample,
  };
}

function hookTriggerSpec(trigger: Trigger, shared: EventShared) {
  return {
    key: trigger.id,
    noun: shared.noun,
    display: { label: clip(trigger.title, 64), description: triggerDescription(trigger.description) },
    eventTypes: shared.eventTypes,
    inputs: shared.inputs,
    subscribe: trigger.hook.subscribe,
    unsubscribe: trigger.hook.unsubscribe,
    list: trigger.hook.list,
    samples: trigger.hook.sample,
    inputFields: shared.inputFields,
    outputFields: shared.outputFields,
    sample: shared.sample,
  };
}

function pollingTriggerSpec(trigger: Trigger, shared: EventShared) {
  return {
    key: `${trigger.id}_polling`,
    noun: shared.noun,
    display: {
      label: clip(`${trigger.title} (polling)`, 64),
      description: clip(`${triggerDescription(trigger.description)} Checked on Zapier's polling schedule rather than instantly.`, 1000),
    },
    eventTypes: shared.eventTypes,
    inputs: shared.inputs,
    polling: trigger.polling,
    samples: trigger.hook.sample,
    inputFields: shared.inputFields,
    outputFields: shared.outputFields,
    sample: shared.sample,
  };
}

// ---------------------------------------------------------------------------------------------
// File texts.

function banner(manifest: Manifest): string {
  return `// Generated by \`npm run export -- zapier\` from the ${manifest.name} manifest (version ${manifest.version}).
// Regenerate it rather than editing by hand.`;
}

function moduleFile(manifest: Manifest, factory: 'optionsTrigger' | 'hookTrigger' | 'pollingTrigger', spec: object): string {
  return `'use strict';

${banner(manifest)}

const { ${factory} } = require('../lib/triggers');

module.exports = ${factory}(${JSON.stringify(spec, null, 2)});
`;
}

function indexFile(manifest: Manifest, triggerKeys: string[]): string {
  const requires = triggerKeys.map((key) => `  require('./triggers/${key}'),`).join('\n');
  const scopes = manifest.auth.scopes.join(', ');
  const authField = {
    key: 'api_key',
    label: 'API key',
    type: 'password',
    required: true,
    helpText: clip(`A ${manifest.name} API key with the scopes ${scopes}. It is sent as the ${manifest.auth.header} header.`, 1000),
  };
  return `'use strict';

${banner(manifest)}

const zapier = require('zapier-platform-core');
const { addApiKey, apiUrl, fillPath, handleErrors, pick } = require('./lib/connector');

const triggers = [
${requires}
];

const AUTH_TEST = ${JSON.stringify({ method: manifest.auth.test.method, path: manifest.auth.test.path, query: manifest.auth.test.query ?? {} })};
const CONNECTION_LABEL = ${JSON.stringify(manifest.auth.connectionLabel ?? null)};

module.exports = {
  version: ${JSON.stringify(manifest.version)},
  platformVersion: zapier.version,

  authentication: {
    type: 'custom',
    fields: [${JSON.stringify(authField, null, 2).replace(/\n/g, '\n    ')}],
    // Who the key belongs to; a rejected key is a 401 with the connector's message.
    test: async (z, bundle) => {
      const response = await z.request({ method: AUTH_TEST.method, url: apiUrl(fillPath(AUTH_TEST.path, {}, z)), params: AUTH_TEST.query });
      return response.data;
    },
    // bundle.inputData is what the test returned.
    connectionLabel: (z, bundle) => {
      const label = CONNECTION_LABEL ? pick(bundle.inputData, CONNECTION_LABEL) : undefined;
      if (label !== undefined && label !== null && label !== '') return String(label);
      const keyName = pick(bundle.inputData, 'key.name');
      return keyName ? String(keyName) : ${JSON.stringify(manifest.name)};
    },
  },

  beforeRequest: [addApiKey],
  afterResponse: [handleErrors],

  triggers: Object.fromEntries(triggers.map((trigger) => [trigger.key, trigger])),

  flags: {
    // Every call goes through z.request, which Zapier logs itself; leave Node's http module alone.
    skipHttpPatch: true,
  },
};
`;
}

function connectorLib(manifest: Manifest, baseUrl: string): string {
  return `'use strict';

${banner(manifest)}

const crypto = require('crypto');

const CONNECTOR_NAME = ${JSON.stringify(manifest.name)};
const DEFAULT_BASE_URL = ${JSON.stringify(baseUrl)};
const API_KEY_HEADER = ${JSON.stringify(manifest.auth.header)};

/** The connector's base URL: the CONNECTOR_BASE_URL environment variable (\`zapier env:set\`), else the export's. */
const baseUrl = () => String(process.env.CONNECTOR_BASE_URL || DEFAULT_BASE_URL).replace(/\\/+$/, '');

const apiUrl = (path) => baseUrl() + path;

/** Fills the {name} segments of a path from values, URL-encoded. */
const fillPath = (path, values, z) =>
  path.replace(/\\{([A-Za-z][A-Za-z0-9_]*)\\}/g, (match, name) => {
    const value = values ? values[name] : undefined;
    if (value === undefined || value === null || value === '') {
      throw new z.errors.Error(\`\${CONNECTOR_NAME}: \${name} is missing\`, 'missing_parameter', 400);
    }
    return encodeURIComponent(String(value));
  });

/** A dotted path into an object (\`account.name\`). */
const pick = (object, path) =>
  String(path)
    .split('.')
    .reduce((value, part) => (value !== null && value !== undefined ? value[part] : undefined), object);

/** A list input as an array of strings: Zapier sends arrays, or a comma-separated string when a value is mapped. */
const toList = (value) => {
  if (value === undefined || value === null || value === '') return [];
  const items = Array.isArray(value) ? value : String(value).split(',');
  return items.map((item) => String(item).trim()).filter((item) => item !== '');
};

const isEmpty = (value) => value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

/** beforeRequest: the connection's key goes in the ${manifest.auth.header} header. */
const addApiKey = (request, z, bundle) => {
  const key = bundle.authData && bundle.authData.api_key;
  if (key) {
    request.headers = request.headers || {};
    request.headers[API_KEY_HEADER] = String(key).trim();
  }
  return request;
};

/** A clear error from a 4xx/5xx answer, with the connector's {message} (and validation details). */
const errorFor = (response, z) => {
  const body = response.data && typeof response.data === 'object' ? response.data : {};
  let message = typeof body.message === 'string' && body.message ? body.message : \`HTTP \${response.status}\`;
  if (Array.isArray(body.details) && body.details.length > 0) {
    message += \` (\${body.details.map((d) => (d && d.path ? \`\${d.path}: \${d.message}\` : String(d && d.message))).join('; ')})\`;
  }
  let where = '';
  try {
    const request = response.request || {};
    where = \` on \${request.method || 'GET'} \${new URL(request.url || response.url).pathname}\`;
  } catch (err) {
    where = '';
  }
  const text = \`\${CONNECTOR_NAME}: \${message} (HTTP \${response.status}\${where})\`;
  // A key the connector no longer accepts: Zapier asks the user to reconnect.
  if (response.status === 401) return new z.errors.ExpiredAuthError(text);
  const code = response.status === 403 ? 'forbidden' : response.status === 404 ? 'not_found' : response.status >= 500 ? 'server_error' : 'invalid_request';
  return new z.errors.Error(text, code, response.status);
};

/** afterResponse: throws errorFor() unless the request asked to see errors itself (skipThrowForStatus). */
const handleErrors = (response, z) => {
  if (response.status >= 400 && !response.skipThrowForStatus) throw errorFor(response, z);
  return response;
};

/** A header of bundle.rawRequest; Zapier renames them \`Http-Webhook-Signature\` style. */
const rawHeader = (headers, name) => {
  const wanted = [name, \`http-\${name}\`];
  const found = Object.keys(headers || {}).find((key) => wanted.includes(key.toLowerCase()));
  return found === undefined ? undefined : String(headers[found]);
};

/**
 * Standard Webhooks verification of a delivery (webhook-id, webhook-timestamp, webhook-signature:
 * HMAC-SHA256 of "{id}.{timestamp}.{body}" with the secret's bytes). Returns null when it is
 * signed with the secret, else the reason.
 */
const signatureProblem = (secret, rawRequest) => {
  const id = rawHeader(rawRequest.headers, 'webhook-id');
  const timestamp = rawHeader(rawRequest.headers, 'webhook-timestamp');
  const signature = rawHeader(rawRequest.headers, 'webhook-signature');
  if (!id || !timestamp || !signature) return 'the webhook signature headers are missing';
  if (typeof rawRequest.content !== 'string') return 'the raw body is missing';
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  const mac = crypto.createHmac('sha256', key).update(\`\${id}.\${timestamp}.\${rawRequest.content}\`).digest('base64');
  const expected = Buffer.from(\`v1,\${mac}\`);
  const ok = signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
  return ok ? null : 'the signature does not match';
};

module.exports = { CONNECTOR_NAME, addApiKey, apiUrl, baseUrl, errorFor, fillPath, handleErrors, isEmpty, pick, signatureProblem, toList };
`;
}

function triggersLib(): string {
  return `'use strict';

// Generated by \`npm run export -- zapier\`. The trigger files under triggers/ are data from the
// manifest; these functions give them their behaviour.

const { CONNECTOR_NAME, apiUrl, errorFor, fillPath, isEmpty, signatureProblem, toList } = require('./connector');

/** Query parameters of an events endpoint: its fixed query plus the inputs that map to one. */
const eventQuery = (endpoint, inputs, inputData) => {
  const params = Object.assign({}, endpoint.query || {});
  for (const input of inputs) {
    if (!input.pollingParam) continue;
    const value = input.list ? toList(inputData[input.key]).join(',') : inputData[input.key];
    if (!isEmpty(value)) params[input.pollingParam] = String(value);
  }
  return params;
};

/** The events an endpoint returns for the trigger's inputs (newest first; each has an id). */
const fetchEvents = async (z, bundle, endpoint, inputs) => {
  const inputData = bundle.inputData || {};
  const response = await z.request({
    method: endpoint.method,
    url: apiUrl(fillPath(endpoint.path, inputData, z)),
    params: eventQuery(endpoint, inputs, inputData),
  });
  return Array.isArray(response.data) ? response.data : [];
};

/** Sample events built from the user's own devices, for set-up screens; only the trigger's types. */
const sampleEvents = async (z, bundle, spec) => {
  const events = await fetchEvents(z, bundle, spec.samples, []);
  return events.filter((event) => event && spec.eventTypes.includes(event.type));
};

const dropdownNotReady = (z, title) =>
  new z.errors.Error(\`\${CONNECTOR_NAME}: choose a \${title} first.\`, 'missing_parameter', 400);

/** A hidden trigger that fills a dynamic dropdown with one option source ({id, name} items). */
const optionsTrigger = (spec) => {
  const perform = async (z, bundle) => {
    // The whole list comes in the first page; a dropdown's "load more" gets nothing new.
    if (bundle.meta && bundle.meta.page > 0) return [];
    const inputData = bundle.inputData || {};
    const values = {};
    for (const param of spec.params) {
      const value = inputData[param.inputKey] !== undefined ? inputData[param.inputKey] : inputData[param.name];
      if (isEmpty(value)) throw dropdownNotReady(z, param.title);
      values[param.name] = Array.isArray(value) ? value[0] : value;
    }
    const response = await z.request({ method: 'GET', url: apiUrl(fillPath(spec.path, values, z)), params: { format: 'objects' } });
    const options = Array.isArray(response.data) ? response.data : [];
    return options.map((option) => ({ id: String(option.value), name: option.label }));
  };
  return {
    key: spec.key,
    noun: spec.noun,
    display: spec.display,
    operation: {
      perform,
      inputFields: spec.inputFields,
      outputFields: spec.outputFields,
    },
  };
};

/** A REST-hook trigger: Zapier subscribes its URL and the connector POSTs Standard Webhooks deliveries. */
const hookTrigger = (spec) => {
  const performSubscribe = async (z, bundle) => {
    const inputData = bundle.inputData || {};
    const body = Object.assign({}, spec.subscribe.body || {}, { target_url: bundle.targetUrl });
    for (const input of spec.inputs) {
      if (!input.hookField) continue;
      const value = input.list ? toList(inputData[input.key]) : inputData[input.key];
      if (!isEmpty(value)) body[input.hookField] = value;
    }
    const response = await z.request({
      method: spec.subscribe.method,
      url: apiUrl(fillPath(spec.subscribe.path, inputData, z)),
      params: spec.subscribe.query || {},
      body,
    });
    // Kept by Zapier as bundle.subscribeData: the hook's id (to unsubscribe) and secret (to verify).
    return response.data;
  };

  const performUnsubscribe = async (z, bundle) => {
    const hook = bundle.subscribeData || {};
    const response = await z.request({
      method: spec.unsubscribe.method,
      url: apiUrl(fillPath(spec.unsubscribe.path, hook, z)),
      skipThrowForStatus: true,
    });
    // A hook that is already gone is what unsubscribing wants.
    if (response.status >= 400 && response.status !== 404 && response.status !== 410) throw errorFor(response, z);
    return { id: hook.id, unsubscribed: true };
  };

  const perform = async (z, bundle) => {
    let body = bundle.cleanedRequest;
    const secret = bundle.subscribeData && bundle.subscribeData.secret;
    const raw = bundle.rawRequest;
    // Deliveries are signed with the hook's secret: when Zapier hands over the raw request, the
    // event is taken from the exact bytes that were verified.
    if (secret && raw && (raw.content !== undefined || raw.headers !== undefined)) {
      const problem = signatureProblem(String(secret), raw);
      if (problem) throw new z.errors.Error(\`\${CONNECTOR_NAME}: ignored a webhook delivery: \${problem}.\`, 'invalid_signature', 401);
      try {
        body = JSON.parse(raw.content);
      } catch (err) {
        throw new z.errors.Error(\`\${CONNECTOR_NAME}: ignored a webhook delivery that is not JSON.\`, 'invalid_body', 400);
      }
    }
    // A delivery is {type, timestamp, data: event}; a bare event is accepted too.
    const event = body && typeof body.data === 'object' && body.data !== null ? body.data : body;
    if (!event || typeof event !== 'object' || !event.id || !spec.eventTypes.includes(event.type)) return [];
    return [event];
  };

  // "Load samples" in the Zap editor: recent events, else samples from the user's own devices.
  const performList = async (z, bundle) => {
    const events = await fetchEvents(z, bundle, spec.list, spec.inputs);
    return events.length > 0 ? events : sampleEvents(z, bundle, spec);
  };

  return {
    key: spec.key,
    noun: spec.noun,
    display: spec.display,
    operation: {
      type: 'hook',
      inputFields: spec.inputFields,
      performSubscribe,
      performUnsubscribe,
      perform,
      performList,
      outputFields: spec.outputFields,
      sample: spec.sample,
    },
  };
};

/** A polling trigger: the newest events first, each with an id Zapier dedupes on. */
const pollingTrigger = (spec) => {
  const perform = async (z, bundle) => {
    const events = await fetchEvents(z, bundle, spec.polling, spec.inputs);
    // The first poll of a key only records a baseline; the Zap editor's test gets samples instead.
    if (events.length === 0 && bundle.meta && bundle.meta.isLoadingSample) return sampleEvents(z, bundle, spec);
    return events;
  };
  return {
    key: spec.key,
    noun: spec.noun,
    display: spec.display,
    operation: {
      type: 'polling',
      inputFields: spec.inputFields,
      perform,
      outputFields: spec.outputFields,
      sample: spec.sample,
    },
  };
};

module.exports = { hookTrigger, optionsTrigger, pollingTrigger };
`;
}

function readme(manifest: Manifest, baseUrl: string, triggerKeys: string[]): string {
  return `# ${manifest.name} for Zapier

Generated by \`npm run export -- zapier\` from the connector manifest (version ${manifest.version}).
Regenerate it rather than editing by hand.

\`\`\`sh
npm install                          # the Zapier CLI: npm install -g zapier-platform-cli
zapier validate
zapier register "${manifest.name}"   # once; or \`zapier link\` to an existing integration
zapier push
\`\`\`

The connector's URL is ${baseUrl}. To point a pushed version elsewhere without regenerating:
\`zapier env:set ${manifest.version} CONNECTOR_BASE_URL=https://connector.example.com\`.

Triggers: ${triggerKeys.map((key) => `\`${key}\``).join(', ')}.
`;
}

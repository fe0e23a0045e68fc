import type { Manifest, Operation, OperationInput, OptionSource, Trigger } from '../../manifest/schema.js';
import { code, jsLiteral } from '../shared/js-literal.js';

/**
 * The manifest → Pipedream component files, laid out as in Pipedream's component registry:
 * - `<app>.app.mjs`: the app (auth fields `base_url` and `api_key`), one `propDefinitions` entry
 *   per option source, named by its id, whose `options()` searches (`query`) and pages
 *   (`prevContext`) on the connector; a path parameter (`{menuId}`) is an argument of
 *   `options()` that components fill from another prop (the groups dropdown follows the menu);
 * - `actions/<slug>/<slug>.mjs` per operation, props named by the inputs' keys;
 * - `sources/<slug>/<slug>.mjs` (instant, a webhook) and `sources/<slug>-polling/…` per trigger.
 * Component keys are `<app>-<id with _ as ->`. Only names and data come from here: the calls
 * themselves are the app's `common/` files, which read the data each component carries.
 */

/** `Signage Connector` → `signage_connector`: the app slug, the prefix of every component key. */
export function appSlug(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return /^[a-z]/.test(slug) ? slug : `connector_${slug}`;
}

export const componentSlug = (id: string) => id.replace(/_/g, '-');
export const componentKey = (app: string, id: string) => `${app}-${componentSlug(id)}`;
export const pollingKey = (app: string, id: string) => `${componentKey(app, id)}-polling`;

/**
 * Props components have besides their inputs (the app prop is `app` in every component, so the
 * shared code finds it): an input of one of these names would hide one.
 */
export const reservedPropNames = ['app', 'db', 'http', 'timer'];

const header = '// Generated from the connector manifest by `npm run export -- pipedream`; export again rather than edit.\n';

/** Pipedream's guidelines: source names start with "New", descriptions with "Emit new". */
function sourceDescription(trigger: Trigger): string {
  const text = trigger.description.trim();
  return /^Fires when\b/.test(text) ? text.replace(/^Fires when\b/, 'Emit new event when') : `Emit new event: ${text}`;
}

/** `(c) => ({ menuId: c.menu_id })`: the option source's path parameters from other props. */
function optionArguments(params: Record<string, string>): string | undefined {
  const entries = Object.entries(params);
  if (entries.length === 0) return undefined;
  return `(c) => ({ ${entries.map(([param, key]) => `${param}: c.${key}`).join(', ')} })`;
}

function dropdownProp(sourceId: string, params: Record<string, string> = {}) {
  const args = optionArguments(params);
  return [code('app'), sourceId, ...(args ? [code(args)] : [])];
}

/** A prop's description: its help text, else its dropdown's description, else its label. */
function describe(manifest: Manifest, field: { label: string; helpText?: string; optionsFrom?: string }): string {
  return field.helpText ?? manifest.optionSources.find((source) => source.id === field.optionsFrom)?.description ?? field.label;
}

function inputProp(manifest: Manifest, input: OperationInput) {
  const list = input.list ? '[]' : '';
  return {
    ...(input.optionsFrom ? { propDefinition: dropdownProp(input.optionsFrom, input.optionParams) } : {}),
    type: input.optionsFrom ? `string${list}` : `${input.type}${list}`,
    label: input.label,
    description: describe(manifest, input),
    optional: input.required ? undefined : true,
    default: input.default,
    min: input.minimum,
    max: input.maximum,
  };
}

/** What an action's code needs of its operation (see common/operation.mjs). */
function operationSpec(operation: Operation) {
  return {
    id: operation.id,
    noun: operation.noun,
    request: operation.request,
    inputs: operation.inputs.map((input) => ({
      key: input.key,
      in: input.in,
      ...(input.param ? { param: input.param } : {}),
      list: input.list,
      ...(input.default !== undefined ? { default: input.default } : {}),
    })),
    result: operation.result,
    ...(operation.paging ? { paging: operation.paging } : {}),
  };
}

/** What a source's code needs of its trigger (see common/instant-source.mjs, polling-source.mjs). */
function triggerSpec(trigger: Trigger) {
  return {
    id: trigger.id,
    title: trigger.title,
    eventTypes: trigger.eventTypes,
    inputs: trigger.inputFields.map((field) => ({
      key: field.key,
      list: field.list,
      ...(field.pollingParam ? { pollingParam: field.pollingParam } : {}),
      ...(field.hookField ? { hookField: field.hookField } : {}),
    })),
    polling: trigger.polling,
    hook: { subscribe: trigger.hook.subscribe, unsubscribe: trigger.hook.unsubscribe },
  };
}

/** `method() { return <data>; }` */
const returning = (name: string, data: unknown) => code(`${name}() {\n  return ${jsLiteral(data, '  ')};\n}`);

export function appFile(manifest: Manifest, app: string): string {
  const definition = (source: OptionSource) => {
    const params = source.params.map((param) => param.name);
    const args = [...params, ...(source.search ? ['query'] : []), 'prevContext'].join(', ');
    const call = jsLiteral(
      {
        path: source.path,
        params: code(params.length === 0 ? '{}' : `{ ${params.join(', ')} }`),
        query: source.search ? code('query') : undefined,
        prevContext: code('prevContext'),
      },
      '  ',
    );
    return {
      type: 'string',
      label: source.title,
      description: source.description ?? `A ${source.title.toLowerCase()}.`,
      useQuery: source.search ? true : undefined,
      options: code(`async options({ ${args} }) {\n  return this.optionPage(${call});\n}`),
    };
  };
  const body = {
    type: 'app',
    app,
    propDefinitions: Object.fromEntries(manifest.optionSources.map((source) => [source.id, definition(source)])),
    methods: code('connector.methods'),
  };
  return `${header}import connector from "./common/connector.mjs";\n\nexport default ${jsLiteral(body)};\n`;
}

export function actionFile(manifest: Manifest, app: string, operation: Operation): string {
  const props: Record<string, unknown> = { app: code('app') };
  for (const input of operation.inputs) props[input.key] = inputProp(manifest, input);
  const body = {
    key: componentKey(app, operation.id),
    name: operation.title,
    description: operation.description,
    version: manifest.version,
    type: 'action',
    annotations: { destructiveHint: false, openWorldHint: true, readOnlyHint: true },
    props,
    methods: { operation: returning('operation', operationSpec(operation)) },
    run: code(`async run({ $ }) {\n  return runOperation(this.app, this, $);\n}`),
  };
  return `${header}import app from "../../${app}.app.mjs";\nimport { runOperation } from "../../common/operation.mjs";\n\nexport default ${jsLiteral(body)};\n`;
}

function triggerProps(manifest: Manifest, trigger: Trigger): Record<string, unknown> {
  const props: Record<string, unknown> = { app: code('app'), '...common.props': code('...common.props') };
  for (const field of trigger.inputFields) {
    const list = field.list ? '[]' : '';
    props[field.key] = {
      ...(field.optionsFrom ? { propDefinition: dropdownProp(field.optionsFrom) } : {}),
      type: `string${list}`,
      label: field.label,
      description: describe(manifest, field),
      optional: field.required ? undefined : true,
    };
  }
  return props;
}

function sourceFile(manifest: Manifest, app: string, trigger: Trigger, kind: 'instant' | 'polling'): string {
  const polling = kind === 'polling';
  const body = {
    '...common': code('...common'),
    key: polling ? pollingKey(app, trigger.id) : componentKey(app, trigger.id),
    name: `New Event: ${trigger.title} (${polling ? 'Polling' : 'Instant'})`,
    description: polling ? `${sourceDescription(trigger)} Checked on a timer rather than instantly.` : sourceDescription(trigger),
    version: manifest.version,
    type: 'source',
    dedupe: 'unique',
    props: triggerProps(manifest, trigger),
    methods: { '...common.methods': code('...common.methods'), trigger: returning('trigger', triggerSpec(trigger)) },
  };
  const common = polling ? 'polling-source' : 'instant-source';
  const imports = `import app from "../../${app}.app.mjs";\nimport common from "../../common/${common}.mjs";\n`;
  return `${header}${imports}\nexport default ${jsLiteral(body)};\n`;
}

/** Relative path → text of every generated component file. */
export function componentFiles(manifest: Manifest, app: string): Map<string, string> {
  const files = new Map<string, string>();
  files.set(`${app}.app.mjs`, appFile(manifest, app));
  for (const operation of manifest.operations) {
    const slug = componentSlug(operation.id);
    files.set(`actions/${slug}/${slug}.mjs`, actionFile(manifest, app, operation));
  }
  for (const trigger of manifest.triggers) {
    const slug = componentSlug(trigger.id);
    files.set(`sources/${slug}/${slug}.mjs`, sourceFile(manifest, app, trigger, 'instant'));
    files.set(`sources/${slug}-polling/${slug}-polling.mjs`, sourceFile(manifest, app, trigger, 'polling'));
  }
  return files;
}

import { checkBaseUrl } from '../shared/export-error.js';
import type { Manifest } from '../../manifest/schema.js';
import { base, connection, rpc, searchModuleCode } from './components.js';
import { instantTriggerCode, pollingTriggerCode, webhook } from './triggers.js';
import { checkUnique, connectionName, instantTriggerName, kebabCase, pollingTriggerName, rpcName, searchModuleName, webhookName } from './names.js';
import { runtimeFiles, templateDir } from '../shared/app-files.js';

/**
 * The Make exporter: the manifest → a Make custom app as the local project of Make's VS Code
 * extension (Make Apps Editor, "Local development for Apps"): `makecomapp.json` lists the
 * components and their code files (`*.communication.iml.json` and so on), which the extension
 * deploys into a custom app. Beside them: the app's tests (`test/`, copied from `template/`),
 * which check the files against the extension's JSON schemas and send every request, built from
 * the templates, to a live connector.
 */

export { MakeExportError } from './names.js';

export const makeAppDir = templateDir(import.meta.url);

type Codes = Record<string, unknown>;

/** The code types of each component kind: makecomapp.json key → file name part. */
const codeFiles = {
  connection: { communication: 'communication', params: 'params' },
  webhook: { communication: 'communication', params: 'params', attach: 'attach', detach: 'detach' },
  rpc: { communication: 'communication', params: 'params' },
  module: { communication: 'communication', staticParams: 'static-params', mappableParams: 'mappable-params', interface: 'interface', samples: 'samples' },
  trigger: { epoch: 'epoch' },
} as const;

/** Where a code lives, as the extension lays out a cloned app: `modules/get-device/get-device.communication.iml.json`. */
const codePath = (kind: string, name: string, part: string) => `${kind}s/${kebabCase(name)}/${kebabCase(name)}.${part}.iml.json`;

const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

interface Component {
  kind: 'connection' | 'webhook' | 'rpc' | 'module';
  name: string;
  metadata: Record<string, unknown>;
  /** makecomapp.json code key → the code's JSON. */
  codes: Codes;
}

/** The extension's code keys for Make's API code names (`api` → communication, `expect` → mappableParams…). */
function codesOf(kind: Component['kind'], code: Record<string, unknown>): Codes {
  const byApiName: Record<string, string> = {
    api: 'communication',
    parameters: kind === 'module' ? 'staticParams' : 'params',
    expect: 'mappableParams',
    interface: 'interface',
    samples: 'samples',
    epoch: 'epoch',
    attach: 'attach',
    detach: 'detach',
  };
  return Object.fromEntries(Object.entries(code).map(([apiName, value]) => [byApiName[apiName]!, value]));
}

function components(manifest: Manifest, baseUrl: string): Component[] {
  const conn = connectionName(manifest);
  const list: Component[] = [
    {
      kind: 'connection',
      name: conn,
      metadata: { label: manifest.name, connectionType: 'basic' },
      codes: codesOf('connection', connection(manifest, baseUrl)),
    },
  ];
  for (const source of manifest.optionSources) {
    list.push({ kind: 'rpc', name: rpcName(source.id), metadata: { label: source.title, connection: conn }, codes: codesOf('rpc', rpc(manifest, source)) });
  }
  for (const operation of manifest.operations) {
    list.push({
      kind: 'module',
      name: searchModuleName(operation.id),
      metadata: { label: operation.title, description: operation.description, moduleType: 'search', connection: conn },
      codes: codesOf('module', searchModuleCode(operation)),
    });
  }
  for (const trigger of manifest.triggers) {
    const hook = webhookName(trigger.id);
    list.push({
      kind: 'webhook',
      name: hook,
      metadata: { label: trigger.title, webhookType: 'web', connection: conn },
      codes: codesOf('webhook', webhook(trigger)),
    });
    list.push({
      kind: 'module',
      name: instantTriggerName(trigger.id),
      metadata: {
        label: trigger.title,
        description: `${trigger.description} Instant: the connector calls Make.`,
        moduleType: 'instant_trigger',
        connection: conn,
        webhook: hook,
      },
      codes: codesOf('module', instantTriggerCode(trigger)),
    });
    list.push({
      kind: 'module',
      name: pollingTriggerName(trigger.id),
      metadata: {
        label: `${trigger.title} (polling)`,
        description: `${trigger.description} Checks the connector on the scenario's schedule.`,
        moduleType: 'trigger',
        connection: conn,
      },
      codes: codesOf('module', pollingTriggerCode(trigger)),
    });
  }
  checkUnique(list.map((component) => `${component.kind}:${component.name}`));
  return list;
}

/** The module groups Make shows in the app's module list. */
function groups(list: Component[]) {
  const modules = (type: string) => list.filter((c) => c.kind === 'module' && c.metadata.moduleType === type).map((c) => c.name);
  return [
    { label: 'Triggers', modules: [...modules('instant_trigger'), ...modules('trigger')] },
    { label: 'Searches', modules: modules('search') },
  ];
}

function packageJson(manifest: Manifest): string {
  return json({
    name: `${kebabCase(manifest.name) || 'connector'}-make`,
    version: manifest.version,
    description: `${manifest.description} (Make custom app)`,
    private: true,
    type: 'module',
    scripts: { test: 'node --test --test-concurrency=1 test/*.test.js' },
    engines: { node: '>=20' },
    devDependencies: { ajv: '^8.17.1' },
  });
}

/** Generates the app: relative path → file text. */
export function makeApp(manifest: Manifest, options: { baseUrl: string }): Map<string, string> {
  const baseUrl = checkBaseUrl(options.baseUrl);
  const list = components(manifest, baseUrl);
  const files = new Map<string, string>();
  const app = {
    fileVersion: 1,
    generalCodeFiles: { base: 'general/base.iml.json', common: null, readme: 'general/readme.md', groups: 'modules/groups.json' },
    components: { connection: {}, webhook: {}, module: {}, rpc: {}, function: {}, endpoint: {} } as Record<string, Record<string, unknown>>,
    origins: [],
  };
  for (const component of list) {
    const paths: Record<string, string> = {};
    for (const [code, value] of Object.entries(component.codes)) {
      const part = (codeFiles[component.kind] as Record<string, string>)[code] ?? (codeFiles.trigger as Record<string, string>)[code]!;
      paths[code] = codePath(component.kind, component.name, part);
      files.set(paths[code], json(value));
    }
    app.components[component.kind]![component.name] = { ...component.metadata, codeFiles: paths };
  }
  files.set('makecomapp.json', json(app));
  files.set('general/base.iml.json', json(base()));
  files.set('modules/groups.json', json(groups(list)));
  files.set('package.json', packageJson(manifest));
  const names = (kind: string, type?: string) =>
    list
      .filter((c) => c.kind === kind && (type === undefined || c.metadata.moduleType === type))
      .map((c) => `- \`${c.name}\`: ${String(c.metadata.label)}`)
      .join('\n');
  const values = {
    NAME: manifest.name,
    VERSION: manifest.version,
    BASE_URL: baseUrl,
    SCOPES: manifest.auth.scopes.map((scope) => `\`${scope}\``).join(', '),
    CONNECTION: connectionName(manifest),
    SEARCHES: names('module', 'search'),
    INSTANT_TRIGGERS: names('module', 'instant_trigger'),
    POLLING_TRIGGERS: names('module', 'trigger'),
    RPCS: names('rpc'),
  };
  for (const [path, text] of runtimeFiles(values, makeAppDir)) files.set(path, text);
  return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

import { ExportError, checkBaseUrl } from '../shared/export-error.js';
import type { Manifest } from '../../manifest/schema.js';
import { jsLiteral } from '../shared/js-literal.js';
import { appSlug, componentFiles, componentKey, componentSlug, pollingKey, reservedPropNames } from './components.js';
import { runtimeFiles, templateDir } from '../shared/app-files.js';
import { sharedFile } from '../shared/shared-files.js';

/**
 * The Pipedream exporter: the manifest → a folder of Pipedream components (an app file,
 * actions, instant and polling sources) in the layout of Pipedream's component registry. The
 * component files and `common/constants.mjs` are generated; the code they run (`common/`), the
 * app's tests and lint configuration are the files under `template/`, copied as they are.
 */

export class PipedreamExportError extends ExportError {}

export interface PipedreamExportOptions {
  /** The connector's public base URL: the default of the connection's `base_url`. */
  baseUrl: string;
}

export const pipedreamRuntimeDir = templateDir(import.meta.url);

/** The versions the app is tested with; the lint plugin's only release is 0.3.0. */
export const pipedreamVersions = {
  platform: '3.4.0',
  eslint: '9.39.5',
  eslintJs: '9.39.5',
  lintPlugin: '0.3.0',
};

/** Names the components would share or hide: an input called `db`, or two components of one key. */
function checkNames(manifest: Manifest, app: string): void {
  const keys = [
    ...manifest.operations.map((operation) => componentKey(app, operation.id)),
    ...manifest.triggers.flatMap((trigger) => [componentKey(app, trigger.id), pollingKey(app, trigger.id)]),
  ];
  const clash = keys.find((key, i) => keys.indexOf(key) !== i);
  if (clash) throw new PipedreamExportError(`two Pipedream components would both have the key ${clash}; rename an operation or trigger`);
  const reserved = reservedPropNames;
  for (const operation of manifest.operations) {
    const bad = operation.inputs.find((input) => reserved.includes(input.key));
    if (bad) throw new PipedreamExportError(`operation ${operation.id}: an input cannot be called ${bad.key} on Pipedream (${reserved.join(', ')} are taken)`);
  }
  for (const trigger of manifest.triggers) {
    const bad = trigger.inputFields.find((field) => reserved.includes(field.key));
    if (bad) throw new PipedreamExportError(`trigger ${trigger.id}: an input cannot be called ${bad.key} on Pipedream (${reserved.join(', ')} are taken)`);
  }
}

/** What the app's common code needs to know about the connector itself. */
function constantsFile(manifest: Manifest, baseUrl: string): string {
  const constants = {
    name: manifest.name,
    defaultBaseUrl: baseUrl,
    apiKeyHeader: manifest.auth.header,
    authTest: manifest.auth.test,
    connectionLabel: manifest.auth.connectionLabel ?? null,
  };
  return `// Generated from the connector manifest by \`npm run export -- pipedream\`.\nexport default ${jsLiteral(constants)};\n`;
}

function packageJson(manifest: Manifest, app: string): string {
  const pkg = {
    name: `${app.replace(/_/g, '-')}-pipedream`,
    version: manifest.version,
    description: `Pipedream components for ${manifest.name}`,
    main: `${app}.app.mjs`,
    private: true,
    type: 'module',
    scripts: {
      lint: 'eslint .',
      // One file at a time: the source tests change device statuses on the shared connector.
      test: 'eslint . && node --test --test-concurrency=1 test/*.test.mjs',
    },
    engines: { node: '>=20' },
    dependencies: { '@pipedream/platform': pipedreamVersions.platform },
    devDependencies: {
      '@eslint/js': pipedreamVersions.eslintJs,
      '@pipedream/eslint-plugin-pipedream': pipedreamVersions.lintPlugin,
      eslint: pipedreamVersions.eslint,
    },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** Generates the app: relative path → file text. */
export function pipedreamApp(manifest: Manifest, options: PipedreamExportOptions): Map<string, string> {
  const baseUrl = checkBaseUrl(options.baseUrl);
  const app = appSlug(manifest.name);
  checkNames(manifest, app);
  const files = runtimeFiles(
    {
      NAME: manifest.name,
      VERSION: manifest.version,
      BASE_URL: baseUrl,
      APP: app,
      SCOPES: manifest.auth.scopes.map((scope) => `\`${scope}\``).join(', '),
      FIRST_ACTION: componentSlug(manifest.operations[0]?.id ?? '<action>'),
      FIRST_SOURCE: componentSlug(manifest.triggers[0]?.id ?? '<source>'),
      ACTIONS: manifest.operations.map((operation) => `- \`${componentKey(app, operation.id)}\`: ${operation.title}`).join('\n'),
      SOURCES: manifest.triggers
        .map((trigger) => `- \`${componentKey(app, trigger.id)}\` (instant) and \`${pollingKey(app, trigger.id)}\` (polling): ${trigger.title}`)
        .join('\n'),
    },
    pipedreamRuntimeDir,
  );
  for (const [path, text] of componentFiles(manifest, app)) files.set(path, text);
  files.set('common/signature.mjs', sharedFile('standard-webhooks.mjs'));
  files.set('common/constants.mjs', constantsFile(manifest, baseUrl));
  files.set('package.json', packageJson(manifest, app));
  return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

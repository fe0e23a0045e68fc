import { ExportError, checkBaseUrl, packageSlug } from '../shared/export-error.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest } from '../../manifest/schema.js';
import { projectRoot } from '../../paths.js';
import type { Definition } from './template/src/lib/types.js';
import { runtimeFiles, templateDir } from '../shared/app-files.js';
import { sharedFile } from '../shared/shared-files.js';

/**
 * The Activepieces exporter: the manifest → a TypeScript piece package on
 * `@activepieces/pieces-framework` and `@activepieces/pieces-common`, exported as
 * `signageConnector` from its main module. Only `src/definition.ts` (the manifest's option
 * sources, operations and triggers as data), `package.json` and the README's facts are
 * generated; the piece's code and tests are the files under `template/`, copied as
 * they are.
 */

export class ActivepiecesExportError extends ExportError {}

/** The framework versions the piece is built and tested on. */
export const activepiecesVersions = {
  framework: '0.32.0',
  common: '0.12.5',
} as const;

export const activepiecesRuntimeDir = templateDir(import.meta.url);

/** The exported module and piece names that flows refer to. */
export const pieceExportName = 'signageConnector';
export const pollingSuffix = '_polling';

export function activepiecesDefinition(manifest: Manifest, baseUrl: string): Definition {
  return {
    name: manifest.name,
    version: manifest.version,
    description: manifest.description,
    defaultBaseUrl: baseUrl,
    apiKeyHeader: manifest.auth.header,
    auth: {
      test: { method: manifest.auth.test.method, path: manifest.auth.test.path, ...(manifest.auth.test.query ? { query: manifest.auth.test.query } : {}) },
      connectionLabel: manifest.auth.connectionLabel ?? null,
      scopes: [...manifest.auth.scopes],
    },
    optionSources: manifest.optionSources.map((source) => ({
      id: source.id,
      title: source.title,
      description: source.description ?? `The ${source.title} choices.`,
      path: source.path,
      params: source.params.map((param) => ({ name: param.name, title: param.title, optionsFrom: param.optionsFrom ?? null })),
      maxLimit: source.paging.maxLimit,
    })),
    operations: manifest.operations.map((operation) => ({
      id: operation.id,
      title: operation.title,
      description: operation.description,
      noun: operation.noun,
      request: { method: operation.request.method, path: operation.request.path, auth: operation.request.auth, query: { ...operation.request.query } },
      inputs: operation.inputs.map((input) => ({
        key: input.key,
        label: input.label,
        helpText: input.helpText ?? null,
        type: input.type,
        required: input.required,
        list: input.list,
        in: input.in,
        param: input.param ?? null,
        default: input.default ?? null,
        minimum: input.minimum ?? null,
        maximum: input.maximum ?? null,
        optionsFrom: input.optionsFrom ?? null,
        optionParams: { ...input.optionParams },
      })),
      result: { items: operation.result.items ?? null, single: operation.result.single, notFound: operation.result.notFound ?? null },
      paging: operation.paging ? { ...operation.paging } : null,
      sample: operation.sample,
    })),
    triggers: manifest.triggers.map((trigger) => ({
      id: trigger.id,
      title: trigger.title,
      description: trigger.description,
      eventTypes: [...trigger.eventTypes],
      inputs: trigger.inputFields.map((field) => ({
        key: field.key,
        label: field.label,
        helpText: field.helpText ?? null,
        required: field.required,
        list: field.list,
        optionsFrom: field.optionsFrom ?? null,
        pollingParam: field.pollingParam ?? null,
        hookField: field.hookField ?? null,
      })),
      polling: trigger.polling,
      hook: { subscribe: trigger.hook.subscribe, unsubscribe: trigger.hook.unsubscribe, list: trigger.hook.list, sample: trigger.hook.sample },
      sample: trigger.sample,
    })),
  };
}

/** Action and trigger names as flows refer to them. */
export function activepiecesNames(manifest: Manifest): { actions: string[]; triggers: string[] } {
  return {
    actions: manifest.operations.map((operation) => operation.id),
    triggers: manifest.triggers.flatMap((trigger) => [trigger.id, `${trigger.id}${pollingSuffix}`]),
  };
}

function installedVersion(name: string, fallback: string): string {
  const path = join(projectRoot, 'node_modules', ...name.split('/'), 'package.json');
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as { version: string }).version : fallback;
}

export function activepiecesPackageJson(manifest: Manifest): string {
  const pkg = {
    name: `piece-${packageSlug(manifest.name)}`,
    version: manifest.version,
    description: manifest.description,
    main: 'dist/src/index.js',
    files: ['dist/src'],
    scripts: {
      build: 'tsc -p tsconfig.json',
      // The piece is type-checked strictly, then its tests run on the compiled code, one file
      // at a time (they share the connector's devices).
      test: 'tsc -p tsconfig.json --strict && node --test --test-concurrency=1 dist/test/',
      prepack: 'npm run build',
    },
    engines: { node: '>=20.10' },
    dependencies: {
      '@activepieces/pieces-common': activepiecesVersions.common,
      '@activepieces/pieces-framework': activepiecesVersions.framework,
    },
    devDependencies: {
      '@types/node': `^${installedVersion('@types/node', '20.19.0').split('.')[0]}`,
      typescript: `~${installedVersion('typescript', '5.9.3').split('.').slice(0, 2).join('.')}.0`,
    },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** Generates the piece: relative path → file text. */
export function activepiecesApp(manifest: Manifest, options: { baseUrl: string }): Map<string, string> {
  const baseUrl = checkBaseUrl(options.baseUrl);
  const names = activepiecesNames(manifest);
  const all = [...names.actions, ...names.triggers];
  const clash = all.find((name, i) => all.indexOf(name) !== i);
  if (clash) throw new ActivepiecesExportError(`two Activepieces actions or triggers would both be called ${clash}; rename the operation or trigger`);

  const files = runtimeFiles(
    {
      NAME: manifest.name,
      VERSION: manifest.version,
      BASE_URL: baseUrl,
      PACKAGE: `piece-${packageSlug(manifest.name)}`,
      FRAMEWORK_VERSION: activepiecesVersions.framework,
      COMMON_VERSION: activepiecesVersions.common,
      SCOPES: manifest.auth.scopes.map((scope) => `\`${scope}\``).join(', '),
      ACTIONS: names.actions.map((name) => `- \`${name}\``).join('\n'),
      TRIGGERS: names.triggers.map((name) => `- \`${name}\``).join('\n'),
    },
    activepiecesRuntimeDir,
  );
  const definition = activepiecesDefinition(manifest, baseUrl);
  files.set(
    'src/definition.ts',
    `// Generated from the connector's manifest by \`npm run export -- activepieces\`; do not edit.\nimport type { Definition } from './lib/types';\n\nexport const definition: Definition = ${JSON.stringify(definition, null, 2)};\n`,
  );
  files.set('src/lib/signature.ts', sharedFile('standard-webhooks.ts'));
  files.set('src/lib/manifest.d.ts', sharedFile('manifest.d.ts'));
  files.set('package.json', activepiecesPackageJson(manifest));
  return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

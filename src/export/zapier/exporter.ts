import { checkBaseUrl } from '../shared/export-error.js';
import type { Manifest } from '../../manifest/schema.js';
import { triggerKeys, zapierDefinition } from './definition.js';
import { installedZapierVersions, packageJson, ZapierExportError, zapierCliNode, type ZapierVersions } from './package.js';
import { runtimeFiles, templateDir } from '../shared/app-files.js';
import { sharedFile } from '../shared/shared-files.js';

/**
 * The Zapier exporter: the platform-neutral manifest (`manifests/connector.json`) → a
 * CommonJS Zapier platform app that `zapier-platform-core` runs and the Zapier CLI validates,
 * tests and pushes. Only `definition.json`, `package.json` and the README's facts are
 * generated; the app's code and tests are the files under `template/`, copied as they are.
 *
 * The connection holds the connector's base URL (`base_url`, beside `api_key`); the base URL
 * given at export is that field's default, and every request the app makes goes to the
 * connection's own.
 */

export { optionTriggerKey, snakeCase } from './definition.js';
export { installedZapierVersions, ZapierExportError, zapierCliNode, type ZapierVersions } from './package.js';

export interface ZapierExportOptions {
  /** The connector's public base URL: the default of the connection's `base_url` field (a trailing slash is dropped). */
  baseUrl: string;
  /** Defaults to the versions installed in this project. */
  versions?: ZapierVersions;
}

/** Zapier's version pattern (VersionSchema): stricter than semver. */
const zapierVersion = /^(?:0|[1-9]\d{0,2})\.(?:0|[1-9]\d{0,2})\.(?:0|[1-9]\d{0,2})(?:-(?=.{1,12}$)[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*)?$/;

/** Generates the app: relative path → file text. */
export function zapierApp(manifest: Manifest, options: ZapierExportOptions): Map<string, string> {
  const versions = options.versions ?? installedZapierVersions();
  const baseUrl = checkBaseUrl(options.baseUrl);
  if (!zapierVersion.test(manifest.version)) {
    throw new ZapierExportError(`manifest version ${manifest.version} is not a Zapier app version (x.y.z with parts up to 999, optional short -label)`);
  }
  const definition = zapierDefinition(manifest, baseUrl);
  const keys = triggerKeys(definition);
  const clash = keys.find((key, i) => keys.indexOf(key) !== i);
  if (clash) throw new ZapierExportError(`two Zapier triggers would both be called ${clash}; rename the trigger or option source`);

  const files = runtimeFiles(
    {
      NAME: manifest.name,
      VERSION: manifest.version,
      BASE_URL: baseUrl,
      CLI_VERSION: versions.cli,
      CLI_NODE: zapierCliNode,
      NODE_ENGINE: versions.nodeEngine,
      SCOPES: manifest.auth.scopes.map((scope) => `\`${scope}\``).join(', '),
      TRIGGERS: keys.map((key) => `- \`${key}\``).join('\n'),
      SEARCHES: definition.searches.map((search) => `- \`${search.key}\`: ${search.display.label}`).join('\n') || 'None.',
    },
    templateDir(import.meta.url),
  );
  files.set('lib/signature.js', sharedFile('standard-webhooks.cjs'));
  files.set('lib/manifest.d.ts', sharedFile('manifest.d.ts'));
  files.set('definition.json', `${JSON.stringify(definition, null, 2)}\n`);
  files.set('package.json', packageJson(manifest, versions));
  return new Map([...files].sort(([a], [b]) => a.localeCompare(b)));
}

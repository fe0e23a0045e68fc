import { ExportError, packageSlug } from '../shared/export-error.js';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Manifest } from '../../manifest/schema.js';
import { projectRoot } from '../../paths.js';

export class ZapierExportError extends ExportError {}

/**
 * The Zapier CLI 19 (`zapier-platform-cli`, binary `zapier-platform`) refuses to run on a
 * Node.js older than 22. The generated app pins this Node.js from the npm registry (the `node`
 * package ships the binary) as a devDependency: npm puts it first on the PATH of the app's
 * scripts and of `npx`, so the CLI runs on it whatever Node.js the machine has. Our own
 * project cannot do the same: its `node` would shadow the one better-sqlite3 was built for.
 */
export const zapierCliNode = '22.23.3';

/** The versions the generated app depends on: the ones this project is tested with. */
export interface ZapierVersions {
  /** Exact `zapier-platform-core` version (Zapier requires an exact one). */
  core: string;
  /** Exact `zapier-platform-cli` version. */
  cli: string;
  /** jest, for the app's tests (the runner Zapier's own app template uses). */
  jest: string;
  /** `engines.node` of the generated package: what the app's code needs to run. */
  nodeEngine: string;
}

interface PackageJson {
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as PackageJson;

/** A package's installed version, else the version its range in our package.json names. */
function installedPackage(root: string, name: string): PackageJson {
  const installed = join(root, 'node_modules', ...name.split('/'), 'package.json');
  if (existsSync(installed)) return readJson(installed);
  const own = readJson(join(root, 'package.json'));
  const exact = (own.devDependencies?.[name] ?? own.dependencies?.[name])?.match(/\d+\.\d+\.\d+/)?.[0];
  if (!exact) throw new ZapierExportError(`${name} is not installed and not declared in package.json; run \`npm ci\` first`);
  return { version: exact };
}

export function installedZapierVersions(root = projectRoot): ZapierVersions {
  const core = installedPackage(root, 'zapier-platform-core');
  return {
    core: core.version,
    cli: installedPackage(root, 'zapier-platform-cli').version,
    jest: `^${installedPackage(root, 'jest').version}`,
    nodeEngine: core.engines?.node ?? '>=18',
  };
}

export function packageJson(manifest: Manifest, versions: ZapierVersions): string {
  const pkg = {
    name: `${packageSlug(manifest.name)}-zapier`,
    version: manifest.version,
    description: manifest.description,
    main: 'index.js',
    private: true,
    scripts: {
      // What Zapier's app template runs; `zapier-platform test` runs this script. One file at
      // a time: a test that changes a device's status would race the ones that read devices.
      test: 'jest --runInBand --testTimeout 10000',
      validate: 'zapier-platform validate',
      push: 'zapier-platform push',
    },
    engines: { node: versions.nodeEngine },
    dependencies: { 'zapier-platform-core': versions.core },
    devDependencies: {
      '@jest/globals': versions.jest,
      jest: versions.jest,
      node: zapierCliNode,
      'zapier-platform-cli': versions.cli,
    },
    // The install scripts `npm install` needs: `node` puts its Node.js binary in place, esbuild
    // (under the Zapier CLI) its own. npm 11 warns about scripts not listed; npm 12 blocks them.
    allowScripts: { esbuild: true, node: true },
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

import type { Manifest } from '../manifest/schema.js';
import { activepiecesApp } from './activepieces/exporter.js';
import { ExportError } from './shared/export-error.js';
import { makeApp } from './make/exporter.js';
import { n8nApp, n8nPackageName } from './n8n/exporter.js';
import { pipedreamApp } from './pipedream/exporter.js';
import { zapierApp } from './zapier/exporter.js';

/**
 * Every platform `npm run export` knows: the folder it writes, generated from the manifest, and
 * what to do next. A platform's exporter throws `ExportError` (or its own subclass) for a
 * manifest or base URL it cannot express; the CLI prints its message.
 */
export { ExportError };

export interface ExportOptions {
  /** The connector's public base URL, baked in as the default (a trailing slash is dropped). */
  baseUrl: string;
}

export interface Exporter {
  /** The platform's name as people write it (`Zapier`). */
  title: string;
  files(manifest: Manifest, options: ExportOptions): Map<string, string>;
  /** The lines printed after a successful export: `dir` is the folder as the user can type it. */
  nextSteps(dir: string, manifest: Manifest, options: ExportOptions): string;
}

const registry = {
  zapier: {
    title: 'Zapier',
    files: (manifest, options) => zapierApp(manifest, options),
    nextSteps: (dir: string, manifest: Manifest) => `
  cd ${dir}
  npm install                                   # also installs Node.js 22 for the Zapier CLI
  npx zapier-platform validate --without-style
  CONNECTOR_API_KEY=<key> npm test              # against the running connector

With a Zapier account: npx zapier-platform login, then
  npx zapier-platform register "${manifest.name}"   # once
  npx zapier-platform push`,
  },
  make: {
    title: 'Make',
    files: (manifest, options) => makeApp(manifest, options),
    nextSteps: (dir: string) => `
  cd ${dir}
  npm install
  CONNECTOR_API_KEY=<key> npm test              # checks the files, then sends every request to the connector

To put it into Make: open ${dir} in VS Code with the Make Apps Editor extension, right-click
makecomapp.json, Deploy to Make, choose "Deploy into another app", fill in the origin it adds
(your custom app's id, https://<zone>.make.com/api, a file holding your Make API token) and
deploy again.`,
  },
  activepieces: {
    title: 'Activepieces',
    files: (manifest, options) => activepiecesApp(manifest, options),
    nextSteps: (dir: string) => `
  cd ${dir}
  npm install
  npm run build                                  # tsc --strict → dist/
  CONNECTOR_API_KEY=<key> CONNECTOR_BASE_URL=<url> npm test   # against the running connector

Install it into a self-hosted Activepieces: npm pack, then Platform Admin → Pieces →
Install Piece → upload the .tgz (or publish it to your npm registry and give its name).`,
  },
  pipedream: {
    title: 'Pipedream',
    files: (manifest, options) => pipedreamApp(manifest, options),
    nextSteps: (dir: string) => `
  cd ${dir}
  npm install
  npm run lint                                  # @pipedream/eslint-plugin-pipedream
  CONNECTOR_API_KEY=<key> npm test              # against the running connector

With the Pipedream CLI (pd login first), in a workspace that has the app:
  pd publish actions/<action>/<action>.mjs      # each action
  pd deploy sources/<source>/<source>.mjs       # each source you want running`,
  },
  n8n: {
    title: 'n8n',
    files: (manifest, options) => n8nApp(manifest, options),
    nextSteps: (dir: string) => `
  cd ${dir}
  npm install
  npm run lint && npm run build                 # n8n-node lint and build
  npm run scan                                  # n8n's community-package scanner on the packed package
  CONNECTOR_API_KEY=<key> npm test              # in a real n8n (installed once, about 3 GB)

Install into self-hosted n8n: npm pack, then in ~/.n8n/nodes: npm install <path to the .tgz>
(or publish ${n8nPackageName} to npm and install it under Settings → Community nodes).`,
  },
} satisfies Record<string, Exporter>;

export type Platform = keyof typeof registry;
export const exporters: Record<Platform, Exporter> = registry;
export const platformNames = Object.keys(exporters) as Platform[];

export function isExportError(err: unknown): err is ExportError {
  return err instanceof ExportError;
}

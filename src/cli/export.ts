import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadManifest, ManifestError } from '../manifest/load.js';
import { zapierApp, ZapierExportError } from '../export/zapier.js';

/**
 * `npm run export -- zapier --out <dir> [--base-url <url>]`: writes a Zapier platform app
 * generated from manifests/connector.json. Existing files of the same names are overwritten;
 * anything else in the folder (node_modules, .zapierapprc) is left alone.
 */
const usage = 'Usage: npm run export -- zapier --out <dir> [--base-url <url>]   (default base URL http://localhost:3000)';
const platforms = ['zapier'] as const;

function fail(message: string): never {
  console.error(message);
  console.error(usage);
  process.exit(1);
}

let parsed;
try {
  parsed = parseArgs({
    args: process.argv.slice(2),
    allowPositionals: true,
    strict: true,
    options: {
      out: { type: 'string', short: 'o' },
      'base-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
} catch (err) {
  fail((err as Error).message);
}

const { values, positionals } = parsed;
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const [platform, ...extra] = positionals;
if (platform === undefined) fail('Missing the platform (one of: zapier).');
if (!(platforms as readonly string[]).includes(platform)) fail(`Unknown platform "${platform}" (one of: ${platforms.join(', ')}).`);
if (extra.length > 0) fail(`Unexpected argument "${extra[0]}".`);
if (!values.out) fail('Missing --out <dir>.');

const outDir = resolve(values.out);
const baseUrl = values['base-url'] ?? 'http://localhost:3000';

let files: Map<string, string>;
let appName = 'Signage Connector';
try {
  const manifest = loadManifest();
  appName = manifest.name;
  files = zapierApp(manifest, { baseUrl });
} catch (err) {
  if (err instanceof ZapierExportError || err instanceof ManifestError) fail(err.message);
  throw err;
}

try {
  for (const [path, text] of files) {
    const target = join(outDir, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
  }
} catch (err) {
  console.error(`Could not write to ${outDir}: ${(err as Error).message}`);
  process.exit(1);
}

const rel = relative(process.cwd(), outDir);
const shown = rel === '' ? '.' : rel.startsWith('..') ? outDir : rel;
console.log(`Wrote a Zapier app (${files.size} files) to ${outDir}:`);
for (const path of [...files.keys()].sort()) console.log(`  ${path}`);
console.log(`
It calls the connector at ${baseUrl}; the CONNECTOR_BASE_URL environment variable overrides
that at run time. Next (${shown}/README.md and docs/zapier.md have the details):

  cd ${shown}
  npm install                                   # also installs Node.js 22 for the Zapier CLI
  npx zapier-platform validate --without-style
  CONNECTOR_API_KEY=<key> npm test              # against the running connector

With a Zapier account: npx zapier-platform login, then
  npx zapier-platform register "${appName}"   # once
  npx zapier-platform push`);

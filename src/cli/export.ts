import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadManifest, ManifestError } from '../manifest/load.js';
import type { Manifest } from '../manifest/schema.js';
import { exporters, isExportError, platformNames, type Platform } from '../export/platforms.js';

/**
 * `npm run export -- <platform> --out <dir> [--base-url <url>]`: writes a platform app generated
 * from manifests/connector.json. Existing files of the same names are overwritten; anything else
 * in the folder (node_modules, .zapierapprc) is left alone.
 */
const usage = `Usage: npm run export -- <platform> --out <dir> [--base-url <url>]   (platform: ${platformNames.join(', ')}; default base URL http://localhost:3000)`;

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
if (platform === undefined) fail(`Missing the platform (one of: ${platformNames.join(', ')}).`);
if (!(platformNames as string[]).includes(platform)) fail(`Unknown platform "${platform}" (one of: ${platformNames.join(', ')}).`);
const exporter = exporters[platform as Platform];
if (extra.length > 0) fail(`Unexpected argument "${extra[0]}".`);
if (!values.out) fail('Missing --out <dir>.');

const outDir = resolve(values.out);
const baseUrl = values['base-url'] ?? 'http://localhost:3000';

let files: Map<string, string>;
let manifest: Manifest;
try {
  manifest = loadManifest();
  files = exporter.files(manifest, { baseUrl });
} catch (err) {
  if (isExportError(err) || err instanceof ManifestError) fail(err.message);
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
console.log(`Wrote a ${exporter.title} app (${files.size} files) to ${outDir}:`);
for (const path of [...files.keys()].sort()) console.log(`  ${path}`);
console.log(`
Its connection (credential) holds the connector's base URL, ${baseUrl} unless the user enters
another, beside the API key. Next (${shown}/README.md has the details):
${exporter.nextSteps(shown, manifest, { baseUrl })}`);

// Copies each platform app's template (src/export/<platform>/template/, and the files every app
// shares, src/export/shared/template/) into dist/ beside its compiled exporter, which reads it
// from there: the built package, and the container image that holds only dist/, can export.
// Run by `npm run build` and by scripts/ensure-build.mjs after tsc. Kept dependency-free.
import { cpSync, existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const root = new URL('..', import.meta.url).pathname;
const from = join(root, 'src', 'export');
const to = join(root, 'dist', 'src', 'export');

export function copyTemplates() {
  for (const entry of readdirSync(from, { withFileTypes: true })) {
    const template = join(from, entry.name, 'template');
    if (!entry.isDirectory() || !existsSync(template)) continue;
    const target = join(to, entry.name, 'template');
    // A file removed from a template must not linger in dist/ and reach an export.
    rmSync(target, { recursive: true, force: true });
    cpSync(template, target, { recursive: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) copyTemplates();

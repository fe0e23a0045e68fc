import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Each platform app's hand-written files: the `template/` folder beside its exporter
 * (`src/export/<platform>/template/`: its code, tests, README and gitignore). They are real
 * files, checked and run by the tests; an exporter copies them and writes only what comes from
 * the manifest beside them. `npm run build` copies every template into dist/ beside the
 * compiled exporter (scripts/copy-templates.mjs), so the built package finds them the same way.
 */
export function templateDir(exporterUrl: string): string {
  return fileURLToPath(new URL('template/', exporterUrl)).replace(/[\\/]$/, '');
}

/**
 * Not copied: the package.json that makes the folder CommonJS for the type checker (the
 * exporter writes the real one) and the declaration of the generated definition.json.
 */
const notCopied = (path: string) => path === 'package.json' || path.endsWith('.d.json.ts');

/** npm and git treat a file called .gitignore specially; it is kept as `gitignore` here. */
const renamed: Record<string, string> = { gitignore: '.gitignore' };

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => (entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)]));
}

/**
 * Relative output path → text. `{{NAME}}` placeholders in Markdown files are filled from
 * `values`; a placeholder without a value is an error, so none reaches a user.
 */
export function runtimeFiles(values: Record<string, string>, dir: string): Map<string, string> {
  const files = new Map<string, string>();
  for (const file of walk(dir).sort()) {
    const path = relative(dir, file).split(sep).join('/');
    if (notCopied(path)) continue;
    let text = readFileSync(file, 'utf8');
    if (path.endsWith('.md')) {
      text = text.replace(/\{\{([A-Z][A-Z0-9_]*)\}\}/g, (_match, name: string) => {
        const value = values[name];
        if (value === undefined) throw new Error(`${path}: no value for {{${name}}}`);
        return value;
      });
    }
    files.set(renamed[path] ?? path, text);
  }
  return files;
}

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { projectRoot } from '../../paths.js';
import { specTypesText } from './spec-types.js';

/**
 * The generated files of `src/export/shared/template/` (`npm run export:shared` writes them; a
 * test fails when one is stale), beside the hand-written `standard-webhooks.ts`:
 *
 * - `manifest.d.ts`: the manifest types every typed app's spec is built from (spec-types.ts);
 * - `standard-webhooks.mjs` and `standard-webhooks.cjs`: the Standard Webhooks verification
 *   compiled for the apps written in JavaScript (Pipedream's ES modules, Zapier's CommonJS).
 *
 * The exporters only copy these files, so `npm run export` needs no TypeScript at run time.
 */
export const sharedSourceDir = join(projectRoot, 'src', 'export', 'shared', 'template');

// Untyped JavaScript: a type checker that meets it (this repository's `checkJs`) takes its types
// from standard-webhooks.ts instead.
const banner = '// Generated from standard-webhooks.ts by `npm run export:shared`; do not edit.\n// @ts-nocheck\n';

function compiled(source: string, module: ts.ModuleKind): string {
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { target: ts.ScriptTarget.ES2022, module, esModuleInterop: true, removeComments: false },
    fileName: 'standard-webhooks.ts',
  });
  return banner + outputText.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '\n');
}

/** File name → text, as `npm run export:shared` writes them. */
export function generatedSharedFiles(): Map<string, string> {
  const source = readFileSync(join(sharedSourceDir, 'standard-webhooks.ts'), 'utf8');
  return new Map([
    ['manifest.d.ts', specTypesText()],
    ['standard-webhooks.mjs', compiled(source, ts.ModuleKind.ES2022)],
    ['standard-webhooks.cjs', compiled(source, ts.ModuleKind.CommonJS)],
  ]);
}

// Jest's transform for the suite's TypeScript (jest.config.js): Oxc's transpiler, through
// rolldown's `transformSync` (rolldown is Vite's bundler; the same version is pinned as a
// devDependency). Transpile only, file by file, as tsconfig.json's `isolatedModules` allows:
// the type check is `tsc --noEmit` in `npm test`. The output stays ESM (the suite runs under
// `node --experimental-vm-modules`), with a source map for stack traces.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { transformSync } from 'rolldown/utils';

const options = { lang: 'ts', sourceType: 'module', target: 'es2022', sourcemap: true };

// Jest caches each output under this key: the source, the options, this file and rolldown's version.
const salt = [
  readFileSync(new URL(import.meta.url), 'utf8'),
  JSON.parse(readFileSync(new URL('../node_modules/rolldown/package.json', import.meta.url), 'utf8')).version,
].join('\0');

export default {
  canInstrument: false,
  /** @param {string} sourceText @param {string} filename */
  getCacheKey: (sourceText, filename) => createHash('sha256').update(`${salt}\0${filename}\0${sourceText}`).digest('hex'),
  /** @param {string} sourceText @param {string} filename */
  process(sourceText, filename) {
    const result = transformSync(filename, sourceText, options);
    if (result.errors.length > 0) throw new Error(`${filename}: ${result.errors.map((e) => e.message).join('\n')}`);
    return { code: result.code, map: result.map ?? null };
  },
};

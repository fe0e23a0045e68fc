import { expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * No import cycle in src/ (docs/architecture.md, "Layers"): every module only uses modules
 * below it. Imports and re-exports, type-only ones included, of relative `.js` paths are
 * followed; the platform apps under src/export/<platform>/template are other projects and left out.
 */
const srcDir = join(projectRoot, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'template' && dirname(dir) === join(srcDir, 'export') ? [] : sourceFiles(path);
    return /\.ts$/.test(entry.name) && !/\.d\.ts$/.test(entry.name) ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s+'(\.{1,2}\/[^']+)\.js'/gms)].map((m) => m[1]!);
  return specifiers.map((spec) => `${resolve(dirname(file), spec)}.ts`);
}

test('src/ has no import cycle', () => {
  const files = sourceFiles(srcDir);
  const graph = new Map(files.map((file) => [file, importsOf(file).filter((target) => files.includes(target))]));
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next].map((f) => relative(srcDir, f)).join(' → '));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of files) if (!state.has(file)) visit(file);
  expect(cycles).toEqual([]);
  expect(files.length).toBeGreaterThan(50);
});

/** Files a newcomer can read in one sitting (docs/architecture.md): none in src/ above 300 lines. */
test('no source file in src/ is above 300 lines', () => {
  const long = sourceFiles(srcDir)
    .map((file) => ({ file: relative(projectRoot, file), lines: readFileSync(file, 'utf8').split('\n').length - 1 }))
    .filter(({ lines }) => lines > 300);
  expect(long).toEqual([]);
});

import { expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { projectRoot } from '../../src/paths.js';

/**
 * No engine checks above the data layer (docs/architecture.md, "The data layer"): outside
 * src/db/, code asks for an operation (a dialect helper, a method of Db, the store services.ts
 * picked with `byEngine`) and never compares the engine's name.
 */
const srcDir = join(projectRoot, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return /-app$/.test(entry.name) ? [] : sourceFiles(path);
    return /\.ts$/.test(entry.name) ? [path] : [];
  });
}

test('no code outside src/db/ compares the database engine', () => {
  const check = /\bengine\s*[!=]==|[!=]==\s*'(?:postgres|sqlite)'/;
  const offenders = sourceFiles(srcDir)
    .map((file) => relative(srcDir, file))
    .filter((file) => !file.startsWith('db/'))
    .filter((file) => check.test(readFileSync(join(srcDir, file), 'utf8')));
  expect(offenders).toEqual([]);
});

import { expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { projectRoot } from '../../src/paths.js';

/**
 * Files that hold secrets or local state never reach a commit: `.env` is read at start
 * (docs/configuration.md) and may carry keys and database URLs. Asked of git itself, so the
 * answer is what `git add` would do.
 */
const mustBeIgnored = ['.env', 'sub/.env', 'data/connector.db', 'connector.db-wal', 'dist/src/main.js'];

function isIgnored(path: string): boolean {
  const result = spawnSync('git', ['check-ignore', '--no-index', '-q', path], { cwd: projectRoot });
  if (result.status === 128) throw new Error(`git check-ignore failed: ${result.stderr}`);
  return result.status === 0;
}

test.each(mustBeIgnored)('.gitignore ignores %s', (path) => {
  expect(isIgnored(path)).toBe(true);
});

test('.gitignore keeps the example dataset and the sources', () => {
  expect(isIgnored('test/fixtures/dataset.example.json')).toBe(false);
  expect(isIgnored('src/main.ts')).toBe(false);
  expect(isIgnored('.env.example')).toBe(false);
});

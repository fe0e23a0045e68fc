// Builds dist/ when it is missing or older than a source file, so `npm start` works on a
// fresh clone. Kept dependency-free: it runs before anything is compiled.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const stamp = join(root, 'dist', '.build-stamp');

function newestMtime(dir) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const time = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (time > newest) newest = time;
  }
  return newest;
}

// One build at a time: test suites started together (jest workers) wait for the first one's
// build instead of running tsc over the same files at once. A lock older than 5 minutes is
// left over from a killed build and taken over.
const lock = join(root, '.build-lock');
const waitUntil = Date.now() + 300_000;
for (;;) {
  try {
    mkdirSync(lock);
    break;
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    if (Date.now() - statSync(lock).mtimeMs > 300_000 || Date.now() > waitUntil) {
      rmdirSync(lock);
      continue;
    }
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
}
process.on('exit', () => rmdirSync(lock));

const sources = Math.max(
  newestMtime(join(root, 'src')),
  newestMtime(join(root, 'bench')),
  statSync(join(root, 'tsconfig.json')).mtimeMs,
);
if (!existsSync(stamp) || statSync(stamp).mtimeMs < sources) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) {
    console.error('dist/ is missing or stale and TypeScript is not installed: run `npm ci` first.');
    process.exit(1);
  }
  console.error('Building (tsc)...');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  execFileSync(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(stamp)}, '')`]);
}

// Builds dist/ (the service, and the console's assets) when it is missing or older than a source file, so `npm start` works on a
// fresh clone. Kept dependency-free: it runs before anything is compiled.
//
// `node scripts/ensure-build.mjs <module> [args...]` (every npm script) then runs that module
// in this same process. npm's `sh -c` then holds one command, which sh replaces itself with,
// so a signal sent to npm (SIGTERM from a supervisor or a container runtime) reaches the
// service. With `ensure-build && node main.js`, sh stayed in between: SIGTERM ended npm and
// sh and left the service running, orphaned, and SIGINT never reached it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { copyTemplates } from './copy-templates.mjs';

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
const releaseLock = () => rmdirSync(lock);
process.on('exit', releaseLock);

const sources = Math.max(newestMtime(join(root, 'src')), newestMtime(join(root, 'bench')), statSync(join(root, 'tsconfig.json')).mtimeMs);
if (!existsSync(stamp) || statSync(stamp).mtimeMs < sources) {
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) {
    console.error('dist/ is missing or stale and TypeScript is not installed: run `npm ci` first.');
    process.exit(1);
  }
  console.error('Building (tsc)...');
  // Emit only (--noCheck, the same files in a third of the time): type checking is the job of
  // `npm test` (`tsc --noEmit` over src, test and bench), `npm run build` and `npm run lint`.
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--noCheck'], { stdio: 'inherit' });
  copyTemplates();
  execFileSync(process.execPath, ['-e', `require('fs').writeFileSync(${JSON.stringify(stamp)}, '')`]);
}

// The console (console/, docs/console.md): built by Vite into dist/console when that is missing or
// older than its sources or the lock file (a new version of a library it bundles).
// Vite rewrites index.html at every build: its time is the build's.
const consoleStamp = join(root, 'dist', 'console', 'index.html');
const consoleSources = Math.max(newestMtime(join(root, 'console')), statSync(join(root, 'package-lock.json')).mtimeMs);
if (!existsSync(consoleStamp) || statSync(consoleStamp).mtimeMs < consoleSources) {
  const vite = join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  if (!existsSync(vite)) {
    console.error('dist/console is missing or stale and Vite is not installed: run `npm ci` first.');
    process.exit(1);
  }
  console.error('Building the console (vite)...');
  execFileSync(process.execPath, [vite, 'build', '--config', join(root, 'console', 'vite.config.ts')], { stdio: 'inherit', cwd: root });
}

const [target, ...args] = process.argv.slice(2);
if (target) {
  process.removeListener('exit', releaseLock);
  releaseLock();
  const path = resolve(root, target);
  process.argv = [process.argv[0], path, ...args];
  await import(pathToFileURL(path).href);
}

// Builds dist/ when it is missing or older than a source file, so `npm start` works on a
// fresh clone. Kept dependency-free: it runs before anything is compiled.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
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

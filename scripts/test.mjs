// `npm test`: the type check (`tsc --noEmit` over src, test and bench) and the jest suite run
// side by side, since the suite leaves part of the cores idle while it waits on sockets, timers
// and child processes; the type check used to run first, alone, for about 25 s. Arguments go
// to jest. Exits non-zero when either fails; the type check's output is printed once it ends.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const run = (args, options = {}) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, ...options });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.once('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });

const typeCheck = run([join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', 'tsconfig.json']);
const suite = run(['--experimental-vm-modules', join(root, 'node_modules', 'jest', 'bin', 'jest.js'), ...process.argv.slice(2)], { stdio: 'inherit' });
const [checked, tested] = await Promise.all([typeCheck, suite]);
if (checked.code !== 0) {
  process.stderr.write(`\nThe type check failed (tsc --noEmit -p tsconfig.json):\n${checked.output}`);
} else {
  process.stderr.write('Type check (tsc --noEmit -p tsconfig.json): no errors.\n');
}
process.exit(checked.code !== 0 ? checked.code : tested.code);

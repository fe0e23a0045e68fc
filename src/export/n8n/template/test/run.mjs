// `npm test`: n8n-node lint and build, n8n's community-package scan, then the package in a real
// n8n (test/n8n.test.mjs). Each step stops the run when it fails.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const steps = [
	['n8n-node lint', 'npx', ['--no-install', 'n8n-node', 'lint']],
	['n8n-node build', 'npx', ['--no-install', 'n8n-node', 'build']],
	['community-package scan', process.execPath, ['test/scan.mjs']],
	['workflows in n8n', process.execPath, ['--test', 'test/n8n.test.mjs']],
];
const only = process.env.N8N_TEST_STEPS?.split(',');
for (const [name, command, args] of steps) {
	if (only && !only.some((word) => name.includes(word))) continue;
	const started = Date.now();
	console.log(`\n=== ${name}`);
	const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, CI: 'true' } });
	const took = `${((Date.now() - started) / 1000).toFixed(1)} s`;
	if (result.status !== 0) {
		console.error(`=== ${name} failed (exit ${result.status}) after ${took}`);
		process.exit(1);
	}
	console.log(`=== ${name}: ok in ${took}`);
}

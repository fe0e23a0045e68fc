// n8n's community-package scanner (@n8n/scan-community-package) on this package. The published
// tool downloads a package from npm; here its analysis runs on what `npm pack` would publish
// (dist/ and package.json) and on the TypeScript source, as it does for a published package.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { analyzePackage } from '@n8n/scan-community-package/scanner/scanner.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Packs the package into `dir`; returns the tarball's path. */
export function pack(dir) {
	const result = spawnSync('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: root, encoding: 'utf8' });
	if (result.status !== 0) throw new Error(`npm pack failed: ${result.stderr}`);
	return join(dir, result.stdout.trim().split('\n').pop());
}

export async function scan() {
	const work = mkdtempSync(join(tmpdir(), 'n8n-scan-'));
	try {
		const tarball = pack(work);
		const unpacked = join(work, 'package');
		const untar = spawnSync('tar', ['-xzf', tarball, '-C', work]);
		if (untar.status !== 0) throw new Error('could not unpack the tarball');
		const failures = [];
		for (const [what, dir, patterns] of [
			['packed package', unpacked, ['**/*.js', 'package.json']],
			['source', root, ['credentials/**/*.ts', 'nodes/**/*.ts', 'package.json']],
		]) {
			const result = await analyzePackage(dir, patterns);
			console.log(`[scan] ${what}: ${result.passed ? 'passed' : `FAILED: ${result.message}`}`);
			if (!result.passed) failures.push(`${what}: ${result.message}\n${result.details ?? ''}`);
		}
		if (failures.length > 0) throw new Error(failures.join('\n'));
	} finally {
		rmSync(work, { recursive: true, force: true });
	}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	await scan().catch((error) => {
		console.error(error.message);
		process.exit(1);
	});
}

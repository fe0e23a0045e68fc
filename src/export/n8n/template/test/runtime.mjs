// n8n and the Node.js it needs (n8n 2 requires Node.js 24), installed from the npm registry once
// into the platform cache and reused by later runs. This package's own devDependencies stay light.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const pkg = JSON.parse(readFileSync(join(here, '..', 'package.json'), 'utf8'));
export const versions = pkg.n8nTestRuntime;

export const cacheDir =
	process.env.PLATFORM_CACHE_DIR ??
	join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'signage-connector', 'platforms');

// This package's .npmrc sets ignore-scripts for its own install, and npm hands its config on to
// what a script runs (npm_config_ignore_scripts=true under `npm test`): the runtime's installs
// need the node package's and sqlite3's scripts, so they set it back.
const scriptsOn = { npm_config_ignore_scripts: 'false' };

function run(command, args, options) {
	console.log(`[runtime] ${command} ${args.join(' ')}`);
	const result = spawnSync(command, args, { stdio: 'inherit', ...options, env: { ...process.env, ...options.env, ...scriptsOn } });
	if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
}

/** Where n8n and its Node.js are; installs them first when they are missing. */
export function ensureRuntime() {
	const dir = join(cacheDir, 'n8n-runtime');
	const ready = join(dir, `.ready-n8n-${versions.n8n}-node-${versions.node}`);
	// The node package's install script puts the platform's Node.js binary at bin/node.
	const paths = () => ({
		dir,
		node: join(dir, 'node_modules', 'node', 'bin', 'node'),
		n8n: join(dir, 'node_modules', 'n8n', 'bin', 'n8n'),
	});
	const sqlite = join(dir, 'node_modules', 'sqlite3', 'build', 'Release', 'node_sqlite3.node');
	if (existsSync(ready) && existsSync(paths().node) && existsSync(sqlite)) return paths();
	const started = Date.now();
	mkdirSync(dir, { recursive: true });
	if (!existsSync(join(dir, 'package.json'))) {
		writeFileSync(join(dir, 'package.json'), `${JSON.stringify({ private: true, description: 'n8n for the tests of n8n-nodes-signage-connector' }, null, 2)}\n`);
	}
	const npmFlags = ['--no-audit', '--no-fund', '--loglevel=error'];
	// The node package fetches the platform's Node.js in its install script.
	run('npm', ['install', ...npmFlags, `node@${versions.node}`], { cwd: dir });
	// n8n's own install scripts are not needed (one of its dependencies even refuses npm);
	// the one native module n8n needs, sqlite3, is built next with Node.js 24 first on the PATH.
	// It is a Node-API module, so whichever Node.js headers node-gyp finds (npm's nodedir, or
	// the ones it downloads) make a binary that Node.js 24 loads.
	run('npm', ['install', ...npmFlags, '--ignore-scripts', `n8n@${versions.n8n}`], { cwd: dir });
	// That install may lay the node package out again without running its script: run it again.
	run('npm', ['rebuild', 'node'], { cwd: dir });
	const found = paths();
	if (!existsSync(found.node)) throw new Error(`Node.js ${versions.node} is missing at ${found.node} after npm rebuild node`);
	run('npm', ['rebuild', 'sqlite3'], {
		cwd: dir,
		env: { PATH: `${dirname(found.node)}:${process.env.PATH}` },
	});
	if (!existsSync(sqlite)) throw new Error(`sqlite3 was not built (${sqlite} is missing) by npm rebuild sqlite3`);
	writeFileSync(ready, `${new Date().toISOString()}\n`);
	console.log(`[runtime] n8n ${versions.n8n} on Node.js ${versions.node} installed in ${((Date.now() - started) / 1000).toFixed(0)} s`);
	return found;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(ensureRuntime());

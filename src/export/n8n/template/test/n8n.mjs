// A real n8n, headless, for the tests: started on a free loopback port with its own user folder
// (holding this package as an installed community package), driven through its REST API as the
// editor drives it (owner account, session cookie).
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const packageName = 'n8n-nodes-signage-connector';
const owner = { email: 'owner@example.com', firstName: 'Test', lastName: 'Owner', password: 'Passw0rd-for-tests' };
const browserId = 'platform-tests';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort() {
	return await new Promise((resolve, reject) => {
		const server = createServer();
		server.once('error', reject);
		server.listen(0, '127.0.0.1', () => {
			const { port } = server.address();
			server.close(() => resolve(port));
		});
	});
}

/** Installs the packed package into a user folder the way n8n keeps community packages. */
export function installPackage(userFolder, tarball, version) {
	const nodes = join(userFolder, '.n8n', 'nodes');
	const target = join(nodes, 'node_modules', packageName);
	mkdirSync(target, { recursive: true });
	writeFileSync(
		join(nodes, 'package.json'),
		`${JSON.stringify({ name: 'installed-nodes', private: true, dependencies: { [packageName]: version } }, null, 2)}\n`,
	);
	const untar = spawnSync('tar', ['-xzf', tarball, '-C', target, '--strip-components=1']);
	if (untar.status !== 0) throw new Error(`could not unpack ${tarball}`);
}

export class N8n {
	constructor(runtime, userFolder) {
		this.runtime = runtime;
		this.userFolder = userFolder;
		this.cookie = '';
		this.child = undefined;
		this.port = undefined;
		this.logFile = join(userFolder, 'n8n.log');
		// n8n's own (de)serialiser of execution data.
		this.flatted = createRequire(join(runtime.dir, 'node_modules', 'n8n', 'package.json'))('flatted');
	}

	get url() {
		return `http://127.0.0.1:${this.port}`;
	}

	/** Starts n8n (the same port and data on a restart) and waits until it answers. */
	async start() {
		this.port ??= await freePort();
		const log = createWriteStream(this.logFile, { flags: 'a' });
		await new Promise((resolve) => log.once('open', resolve));
		const env = {
			PATH: process.env.PATH,
			HOME: this.userFolder,
			N8N_USER_FOLDER: this.userFolder,
			N8N_PORT: String(this.port),
			N8N_LISTEN_ADDRESS: '127.0.0.1',
			N8N_HOST: '127.0.0.1',
			N8N_PROTOCOL: 'http',
			WEBHOOK_URL: `http://127.0.0.1:${this.port}/`,
			N8N_ENCRYPTION_KEY: 'platform-tests-encryption-key',
			N8N_SECURE_COOKIE: 'false',
			N8N_DIAGNOSTICS_ENABLED: 'false',
			N8N_VERSION_NOTIFICATIONS_ENABLED: 'false',
			N8N_TEMPLATES_ENABLED: 'false',
			N8N_PERSONALIZATION_ENABLED: 'false',
			N8N_ENFORCE_SETTINGS_FILE_PERMISSIONS: 'false',
			N8N_COMMUNITY_PACKAGES_ENABLED: 'true',
			N8N_LOG_LEVEL: process.env.N8N_LOG_LEVEL ?? 'info',
			N8N_LOG_OUTPUT: 'console',
			DB_TYPE: 'sqlite',
			EXECUTIONS_DATA_SAVE_ON_SUCCESS: 'all',
			EXECUTIONS_DATA_SAVE_ON_ERROR: 'all',
			EXECUTIONS_DATA_SAVE_MANUAL_EXECUTIONS: 'true',
			QUEUE_HEALTH_CHECK_ACTIVE: 'true',
			N8N_METRICS: 'false',
			NODE_ENV: 'production',
		};
		this.child = spawn(this.runtime.node, [this.runtime.n8n, 'start'], {
			cwd: this.userFolder,
			env,
			stdio: ['ignore', log, log],
		});
		const started = Date.now();
		for (;;) {
			if (this.child.exitCode !== null) throw new Error(`n8n exited with ${this.child.exitCode}:\n${this.logTail()}`);
			if (Date.now() - started > 180_000) throw new Error(`n8n did not answer /healthz/readiness in 180 s:\n${this.logTail()}`);
			try {
				const response = await fetch(`${this.url}/healthz/readiness`);
				if (response.ok) break;
			} catch {
				// not listening yet
			}
			await sleep(250);
		}
		return Date.now() - started;
	}

	logTail(chars = 6000) {
		try {
			return readFileSync(this.logFile, 'utf8').slice(-chars);
		} catch {
			return '';
		}
	}

	async stop() {
		const child = this.child;
		if (!child || child.exitCode !== null) return;
		const exited = new Promise((resolve) => child.once('exit', resolve));
		child.kill('SIGTERM');
		const killed = await Promise.race([exited.then(() => true), sleep(30_000).then(() => false)]);
		if (!killed) {
			child.kill('SIGKILL');
			await exited;
		}
	}

	/** One call to n8n's internal REST API; answers its `data`. */
	async rest(method, path, body, { allowError = false } = {}) {
		const response = await fetch(`${this.url}/rest${path}`, {
			method,
			headers: {
				'content-type': 'application/json',
				'browser-id': browserId,
				...(this.cookie ? { cookie: this.cookie } : {}),
			},
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const setCookie = response.headers.getSetCookie?.() ?? [];
		const auth = setCookie.find((cookie) => cookie.startsWith('n8n-auth='));
		if (auth) this.cookie = auth.split(';')[0];
		const text = await response.text();
		let json;
		try {
			json = text ? JSON.parse(text) : undefined;
		} catch {
			json = text;
		}
		if (!response.ok && !allowError) {
			throw new Error(`${method} /rest${path} → ${response.status}: ${text.slice(0, 2000)}`);
		}
		return response.ok ? (json?.data ?? json) : { status: response.status, body: json };
	}

	/** The owner account: set up on a fresh user folder, logged in after a restart. */
	async signIn() {
		const setup = await this.rest('POST', '/owner/setup', owner, { allowError: true });
		if (setup?.status && setup.status !== 200) {
			await this.rest('POST', '/login', { emailOrLdapLoginId: owner.email, password: owner.password });
		}
	}

	async createCredential(name, type, data) {
		return await this.rest('POST', '/credentials', { name, type, data });
	}

	async createWorkflow(workflow) {
		return await this.rest('POST', '/workflows', { settings: { executionOrder: 'v1' }, connections: {}, ...workflow });
	}

	/** Publishes and activates a workflow (its current version), as the editor's switch does. */
	async activate(workflow) {
		const current = await this.rest('GET', `/workflows/${workflow.id}`);
		return await this.rest('POST', `/workflows/${workflow.id}/activate`, { versionId: current.versionId });
	}

	async deactivate(workflowId) {
		return await this.rest('POST', `/workflows/${workflowId}/deactivate`, {});
	}

	async executions(workflowId) {
		const filter = encodeURIComponent(JSON.stringify({ workflowId }));
		const answer = await this.rest('GET', `/executions?filter=${filter}&limit=100`);
		return answer.results ?? answer;
	}

	/** One execution with its run data (n8n stores it serialised with flatted). */
	async execution(id) {
		const execution = await this.rest('GET', `/executions/${id}`);
		const data = typeof execution.data === 'string' ? this.flatted.parse(execution.data) : execution.data;
		return { ...execution, data };
	}

	/** The items a node output in an execution. */
	async nodeOutput(executionId, nodeName) {
		const { data } = await this.execution(executionId);
		const runs = data.resultData.runData[nodeName] ?? [];
		return runs.flatMap((run) => (run.data?.main?.[0] ?? []).map((item) => item.json));
	}
}

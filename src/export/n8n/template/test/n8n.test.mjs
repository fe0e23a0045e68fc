// The package inside a real n8n, headless: the credential and its test, every dropdown, a
// workflow per operation, and both triggers against the live connector named by
// CONNECTOR_BASE_URL / CONNECTOR_API_KEY. CONNECTOR_CONTROL_URL (a test control that makes a
// device go offline) is needed for the trigger tests.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { installPackage, N8n, packageName, sleep } from './n8n.mjs';
import { ensureRuntime } from './runtime.mjs';
import { pack } from './scan.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const baseUrl = (process.env.CONNECTOR_BASE_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
const apiKey = process.env.CONNECTOR_API_KEY;
const controlUrl = process.env.CONNECTOR_CONTROL_URL;
const deviceCount = Number(process.env.PLATFORM_TEST_DEVICE_COUNT ?? 0);
if (!apiKey) throw new Error('Set CONNECTOR_API_KEY (and CONNECTOR_BASE_URL) to a running connector');

const type = (name) => `${packageName}.${name}`;

async function connector(path, init = {}) {
	const bearer = !path.startsWith('/v1/');
	const response = await fetch(`${baseUrl}${path}`, {
		...init,
		headers: { ...(bearer ? { authorization: `Bearer ${apiKey}` } : { 'x-api-key': apiKey }), ...init.headers },
	});
	const text = await response.text();
	if (!response.ok) throw new Error(`${path} → ${response.status} ${text}`);
	return text ? JSON.parse(text) : undefined;
}

async function control(deviceId, status) {
	const response = await fetch(`${controlUrl}/devices/${encodeURIComponent(deviceId)}/${status}`, { method: 'POST' });
	assert.equal(response.status, 204, `control ${status} ${deviceId}`);
}

async function waitFor(what, check, timeoutMs) {
	const until = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value) return value;
		if (Date.now() > until) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
		await sleep(1000);
	}
}

const locator = (value) => ({ __rl: true, mode: 'id', value });

describe('n8n-nodes-signage-connector in n8n', () => {
	const userFolder = mkdtempSync(join(tmpdir(), 'n8n-user-'));
	let n8n;
	let credential;
	let devices;
	let menus;

	before(async () => {
		const runtime = ensureRuntime();
		const work = mkdtempSync(join(tmpdir(), 'n8n-pack-'));
		installPackage(userFolder, pack(work), version);
		rmSync(work, { recursive: true, force: true });
		n8n = new N8n(runtime, userFolder);
		const took = await n8n.start();
		console.log(`n8n answered in ${(took / 1000).toFixed(1)} s (log: ${n8n.logFile})`);
		await n8n.signIn();
		const types = await n8n.rest('GET', '/credential-types').catch(() => undefined);
		if (Array.isArray(types)) assert.ok(types.some((t) => t.name === 'signageConnectorApi'), 'the credential type is loaded');
		credential = await n8n.createCredential('Signage connector', 'signageConnectorApi', { baseUrl, apiKey });
		devices = (await connector('/devices?page_size=1000')).data;
		menus = (await connector('/v1/menus')).menus;
	});

	after(async () => {
		await n8n?.stop();
		if (process.env.N8N_TEST_KEEP !== 'true') rmSync(userFolder, { recursive: true, force: true });
	});

	describe('credential', () => {
		it('passes its test with the key', async () => {
			const result = await n8n.rest('POST', '/credentials/test', {
				credentials: { id: credential.id, name: credential.name, type: 'signageConnectorApi', data: { baseUrl, apiKey } },
			});
			assert.equal(result.status, 'OK', JSON.stringify(result));
		});

		it('fails its test with a wrong key', async () => {
			const bad = await n8n.createCredential('Wrong key', 'signageConnectorApi', { baseUrl, apiKey: 'sk_wrong_key_for_the_test' });
			const result = await n8n.rest('POST', '/credentials/test', {
				credentials: { id: bad.id, name: bad.name, type: 'signageConnectorApi', data: { baseUrl, apiKey: 'sk_wrong_key_for_the_test' } },
			});
			assert.equal(result.status, 'Error', JSON.stringify(result));
			assert.equal(result.message, 'Invalid API key', 'the connector\'s message');
		});
	});

	describe('dropdowns (listSearch)', () => {
		const search = (node, methodName, path, currentNodeParameters, filter, paginationToken) =>
			n8n.rest('POST', '/dynamic-node-parameters/resource-locator-results', {
				nodeTypeAndVersion: { name: type(node), version: 1 },
				path,
				methodName,
				currentNodeParameters,
				credentials: { signageConnectorApi: { id: credential.id, name: credential.name } },
				...(filter ? { filter } : {}),
				...(paginationToken ? { paginationToken } : {}),
			});

		it('devices: a page, the next page, and a search on the connector', async (t) => {
			if (devices.length <= 100) {
				t.skip(`the key sees ${devices.length} devices, one page; the test dataset has more`);
				return;
			}
			const params = { operation: 'get_device', device_id: { __rl: true, mode: 'list', value: '' } };
			const first = await search('signageConnector', 'searchDevices', 'parameters.device_id', params);
			assert.equal(first.results.length, 100);
			assert.ok(first.paginationToken, 'a second page');
			const second = await search('signageConnector', 'searchDevices', 'parameters.device_id', params, undefined, first.paginationToken);
			assert.equal(second.results.length, Math.min(100, devices.length - 100));
			const values = new Set([...first.results, ...second.results].map((r) => r.value));
			assert.equal(values.size, first.results.length + second.results.length, 'pages do not repeat');
			const wanted = devices[7];
			const found = await search('signageConnector', 'searchDevices', 'parameters.device_id', params, wanted.name);
			assert.ok(found.results.some((r) => r.value === wanted.id.toLowerCase()), `${wanted.name} found`);
			assert.ok(found.results.length < 100);
		});

		it('menus, and the groups of the chosen menu', async (t) => {
			if (menus.length === 0) {
				t.skip('the key has no menu (the test dataset has some)');
				return;
			}
			const params = (menuId) => ({
				operation: 'get_group',
				menu_id: locator(menuId),
				group_id: { __rl: true, mode: 'list', value: '' },
			});
			const found = await search('signageConnector', 'searchMenus', 'parameters.menu_id', params(''));
			assert.deepEqual(
				found.results.map((r) => r.value).sort(),
				menus.map((m) => m.id).sort(),
			);
			const [a, b] = menus;
			const groupsOf = async (menu) =>
				(await search('signageConnector', 'searchMenuGroups', 'parameters.group_id', params(menu.id))).results;
			const groupsA = await groupsOf(a);
			assert.ok(groupsA.length > 0, 'the first menu has groups');
			const expected = await connector(`/v1/menus/${a.id}/groups/options?format=n8n&limit=100`);
			assert.deepEqual(groupsA, expected.results);
			if (b) {
				const groupsB = await groupsOf(b);
				assert.notDeepEqual(groupsB, groupsA, 'the groups follow the chosen menu');
			}
			const none = await search('signageConnector', 'searchMenuGroups', 'parameters.group_id', params(''));
			assert.deepEqual(none.results, [], 'no groups before a menu is chosen');
		});

		it('the triggers search devices too', async () => {
			for (const node of ['signageConnectorTrigger', 'signageConnectorPollTrigger']) {
				const page = await search(node, 'searchDevices', 'parameters.device_ids.values[0].value', { trigger: 'device_offline' });
				assert.equal(page.results.length, Math.min(100, devices.length));
			}
		});
	});

	/**
	 * Runs one operation in an active workflow (Webhook → Signage Connector) and answers its
	 * items (and the workflow's id, to read its execution).
	 */
	async function runOperation(parameters, withCredential = credential) {
		const path = `op-${randomUUID()}`;
		const workflow = await n8n.createWorkflow({
			name: `operation ${parameters.operation}`,
			nodes: [
				{
					id: randomUUID(),
					name: 'Webhook',
					type: 'n8n-nodes-base.webhook',
					typeVersion: 2,
					position: [0, 0],
					webhookId: randomUUID(),
					parameters: { httpMethod: 'GET', path, responseMode: 'lastNode', responseData: 'allEntries', options: {} },
				},
				{
					id: randomUUID(),
					name: 'Signage',
					type: type('signageConnector'),
					typeVersion: 1,
					position: [200, 0],
					parameters,
					credentials: { signageConnectorApi: { id: withCredential.id, name: withCredential.name } },
				},
			],
			connections: { Webhook: { main: [[{ node: 'Signage', type: 'main', index: 0 }]] } },
		});
		await n8n.activate(workflow);
		try {
			// n8n registers the production webhook just after the activation call answers.
			for (let attempt = 0; ; attempt++) {
				const response = await fetch(`${n8n.url}/webhook/${path}`);
				const text = await response.text();
				if (response.status === 404 && text.includes('not registered') && attempt < 60) {
					await sleep(500);
					continue;
				}
				let body;
				try {
					body = text ? JSON.parse(text) : undefined;
				} catch {
					body = text;
				}
				return { status: response.status, body, workflowId: workflow.id };
			}
		} finally {
			await n8n.deactivate(workflow.id);
		}
	}

	describe('operations', () => {

		it('get_device', async (t) => {
			const device = devices[Math.min(3, devices.length - 1)];
			if (!device) {
				t.skip('the key sees no device');
				return;
			}
			const { status, body } = await runOperation({ operation: 'get_device', device_id: locator(device.id.toUpperCase()) });
			assert.equal(status, 200, JSON.stringify(body));
			assert.equal(body.length, 1);
			assert.equal(body[0].id.toLowerCase(), device.id.toLowerCase());
			assert.equal(body[0].name, device.name);
		});

		it('list_devices: every page up to the limit', async () => {
			const { status, body } = await runOperation({ operation: 'list_devices', is_online: '', limit: 250 });
			assert.equal(status, 200, JSON.stringify(body));
			const expected = Math.min(250, deviceCount || devices.length);
			assert.equal(body.length, expected);
			assert.equal(new Set(body.map((d) => d.id)).size, expected, 'distinct devices');
			const all = await runOperation({ operation: 'list_devices', is_online: '', limit: 10000 });
			assert.equal(all.body.length, deviceCount || devices.length);
			const online = await runOperation({ operation: 'list_devices', is_online: 'true', limit: 10000 });
			assert.ok(online.body.every((d) => d.is_online === true));
		});

		it('list_menus', async () => {
			const { status, body } = await runOperation({ operation: 'list_menus' });
			assert.equal(status, 200, JSON.stringify(body));
			assert.deepEqual(body.map((m) => m.id).sort(), menus.map((m) => m.id).sort());
		});

		it('list_groups of a menu', async (t) => {
			const menu = menus[0];
			if (!menu) {
				t.skip('the key has no menu (the test dataset has some)');
				return;
			}
			const { status, body } = await runOperation({ operation: 'list_groups', menu_id: locator(menu.id), tags: [] });
			assert.equal(status, 200, JSON.stringify(body));
			const expected = await connector(`/v1/groups?menus=${menu.id}`);
			assert.deepEqual(body.map((g) => g.id), expected.groups.map((g) => g.id));
		});

		it('get_group: a group of the chosen menu, and a missing one', async (t) => {
			const menu = menus[0];
			const options = menu ? await connector(`/v1/menus/${menu.id}/groups/options?format=n8n&limit=100`) : { results: [] };
			const group = options.results.at(-1);
			if (!group) {
				t.skip('the key has no menu with groups (the test dataset has some)');
				return;
			}
			const { status, body } = await runOperation({ operation: 'get_group', menu_id: locator(menu.id), group_id: locator(group.value) });
			assert.equal(status, 200, JSON.stringify(body));
			assert.equal(body.length, 1);
			assert.equal(body[0].id, group.value);
			const missing = await runOperation({ operation: 'get_group', menu_id: locator(menu.id), group_id: locator(randomUUID()) });
			assert.notEqual(missing.status, 200);
		});
	});

	describe('a server that answers badly, or never', () => {
		// What a proxy or a broken deployment in front of the connector may do: a 200 that is not
		// JSON or not the connector's shape is a clear error (NodeApiError), never no items or a
		// passed credential test. n8n Cloud allows no process.env in nodes, so the 30 s bound is
		// fixed and the test waits it out once per kind of call.
		let server;
		let answer = null;
		const hanging = new Set();
		let badBase;
		const badCredential = async (name) =>
			await n8n.createCredential(name, 'signageConnectorApi', { baseUrl: badBase, apiKey: 'sk_n8n_bad_answers_000000000' });
		const errorOf = async (workflowId) => {
			const [latest] = await n8n.executions(workflowId);
			const { data } = await n8n.execution(latest.id);
			return String(data.resultData.error?.message ?? '');
		};

		before(async () => {
			const { createServer } = await import('node:http');
			server = createServer((req, res) => {
				req.resume();
				if (answer === null) hanging.add(res);
				else res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
			});
			await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
			badBase = `http://127.0.0.1:${server.address().port}`;
		});

		after(async () => {
			for (const res of hanging) res.destroy();
			server.closeAllConnections();
			await new Promise((resolve) => server.close(resolve));
		});

		it('a dropdown fails on the wrong shape and on no answer', async () => {
			const bad = await badCredential('Bad dropdown');
			const search = () =>
				n8n.rest(
					'POST',
					'/dynamic-node-parameters/resource-locator-results',
					{
						nodeTypeAndVersion: { name: type('signageConnector'), version: 1 },
						path: 'parameters.device_id',
						methodName: 'searchDevices',
						currentNodeParameters: { operation: 'get_device', device_id: { __rl: true, mode: 'list', value: '' } },
						credentials: { signageConnectorApi: { id: bad.id, name: bad.name } },
					},
					{ allowError: true },
				);
			answer = '{"unexpected": true}';
			const wrong = await search();
			assert.notEqual(wrong.status, undefined, `not a dropdown page: ${JSON.stringify(wrong)}`);
			assert.match(JSON.stringify(wrong.body), /Unexpected answer from the connector to GET \/v1\/devices\/options: field|expected a list/);
			answer = null;
			const started = Date.now();
			const hung = await search();
			assert.notEqual(hung.status, undefined);
			assert.match(JSON.stringify(hung.body), /No answer from the connector within 30 s/);
			assert.ok(Date.now() - started < 90_000, `answered after ${Date.now() - started} ms`);
		});

		it('an operation fails on invalid JSON, an object where a list belongs and a device without an id', async () => {
			const bad = await badCredential('Bad operation');
			const cases = [
				['<html>Bad gateway</html>', { operation: 'list_menus' }, /not valid JSON/],
				['{"unexpected": true}', { operation: 'list_devices', is_online: '', limit: 5 }, /Unexpected answer from the connector to GET \/devices: field 'data': expected a list/],
				['{"name": "Front counter"}', { operation: 'get_device', device_id: locator('a4:83:e7:1f:2b:01') }, /expected an object with 'id'/],
			];
			for (const [body, parameters, message] of cases) {
				answer = body;
				const result = await runOperation(parameters, bad);
				assert.notEqual(result.status, 200, `${parameters.operation}: ${JSON.stringify(result.body)}`);
				assert.match(await errorOf(result.workflowId), message, parameters.operation);
			}
		});

		it('an operation fails once 30 s pass without an answer', async () => {
			const bad = await badCredential('Hanging operation');
			answer = null;
			const started = Date.now();
			const result = await runOperation({ operation: 'list_menus' }, bad);
			assert.notEqual(result.status, 200);
			assert.ok(Date.now() - started < 90_000, `answered after ${Date.now() - started} ms`);
			assert.notEqual(await errorOf(result.workflowId), '');
		});
	});

	describe('triggers', { skip: controlUrl ? false : 'CONNECTOR_CONTROL_URL is not set' }, () => {
		let instant;
		let polling;
		const hooksOf = async () =>
			(await connector('/v1/hooks?limit=500')).filter((hook) => hook.target_url.startsWith(n8n.url));
		const itemsOf = async (workflowId, nodeName) => {
			const executions = await n8n.executions(workflowId);
			const items = [];
			for (const execution of executions) items.push(...(await n8n.nodeOutput(execution.id, nodeName)));
			return { count: executions.length, items };
		};
		const triggerNode = (name, nodeType, extra = {}) => ({
			id: randomUUID(),
			name,
			type: type(nodeType),
			typeVersion: 1,
			position: [0, 0],
			parameters: { trigger: 'device_offline', ...extra },
			credentials: { signageConnectorApi: { id: credential.id, name: credential.name } },
		});
		const device = (i) => devices[i];

		it('activating the webhook trigger makes exactly one hook', async () => {
			instant = await n8n.createWorkflow({
				name: 'instant trigger',
				nodes: [{ ...triggerNode('Instant', 'signageConnectorTrigger'), webhookId: randomUUID() }],
			});
			// n8n registers the webhook (and so creates the hook) just after the activation call answers.
			await n8n.activate(instant);
			await waitFor('the hook', async () => (await hooksOf()).length > 0, 60_000);
			await sleep(2000);
			const hooks = await hooksOf();
			assert.equal(hooks.length, 1, JSON.stringify(hooks));
			assert.deepEqual(hooks[0].events, ['device.offline']);
			await n8n.deactivate(instant.id);
			await waitFor('the hook to go', async () => (await hooksOf()).length === 0, 60_000);
			await n8n.activate(instant);
			await waitFor('the hook again', async () => (await hooksOf()).length > 0, 60_000);
			await sleep(2000);
			assert.equal((await hooksOf()).length, 1, 'still one after deactivating and activating again');
		});

		it('activating the polling trigger records a baseline', async () => {
			polling = await n8n.createWorkflow({
				name: 'polling trigger',
				nodes: [triggerNode('Polling', 'signageConnectorPollTrigger', { pollTimes: { item: [{ mode: 'everyMinute' }] } })],
			});
			// n8n polls once while activating: that poll is the baseline.
			await n8n.activate(polling);
			await sleep(2000);
			assert.equal((await n8n.executions(polling.id)).length, 0, 'the baseline emits nothing');
		});

		it('a status change runs each trigger once with the Event', async () => {
			await control(device(11).id, 'offline');
			const got = await waitFor('the webhook delivery', async () => {
				const out = await itemsOf(instant.id, 'Instant');
				return out.count > 0 ? out : undefined;
			}, 60_000);
			assert.equal(got.count, 1);
			const [event] = got.items;
			assert.match(event.id, /^evt_/);
			assert.equal(event.type, 'device.offline');
			assert.equal(event.device.id, device(11).id.toLowerCase());
			assert.equal(event.status, 'offline');
			assert.equal(event.data, undefined, 'the Event, not the delivery envelope');
			// An execution is listed before its run data is saved: wait for the items themselves.
			const polled = await waitFor('the poll', async () => {
				const out = await itemsOf(polling.id, 'Polling');
				return out.items.length > 0 ? out : undefined;
			}, 90_000);
			assert.equal(polled.items.length, 1);
			assert.deepEqual(polled.items[0], event, 'the polling trigger emits the same item');
		});

		it('a forged delivery is refused with 401 and runs nothing', async () => {
			const [hook] = await hooksOf();
			const body = JSON.stringify({ type: 'device.offline', timestamp: new Date().toISOString(), data: { id: 'evt_forged' } });
			const response = await fetch(hook.target_url, {
				method: 'POST',
				headers: {
					'content-type': 'application/json',
					'webhook-id': 'msg_forged',
					'webhook-timestamp': String(Math.floor(Date.now() / 1000)),
					'webhook-signature': `v1,${Buffer.from('not the signature').toString('base64')}`,
				},
				body,
			});
			assert.equal(response.status, 401);
			await sleep(2000);
			assert.equal((await n8n.executions(instant.id)).length, 1);
		});

		it('after a restart of n8n: still one hook, and each event once', async () => {
			await n8n.stop();
			await n8n.start();
			await n8n.signIn();
			// Registered again once a delivery is answered 401 (unsigned) instead of 404.
			const [hook] = await hooksOf();
			await waitFor('the webhook after the restart', async () => {
				const response = await fetch(hook.target_url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
				return response.status === 401;
			}, 60_000);
			await sleep(2000);
			assert.equal((await hooksOf()).length, 1, 'n8n found its hook instead of making another');
			await control(device(12).id, 'offline');
			const got = await waitFor('the second delivery', async () => {
				const out = await itemsOf(instant.id, 'Instant');
				return out.count > 1 ? out : undefined;
			}, 60_000);
			assert.equal(got.count, 2);
			const polled = await waitFor('the second poll', async () => {
				const out = await itemsOf(polling.id, 'Polling');
				return out.items.length > 1 ? out : undefined;
			}, 90_000);
			// The poll n8n made when it started again emitted nothing seen before the restart.
			await sleep(3000);
			const final = await itemsOf(polling.id, 'Polling');
			assert.deepEqual(
				final.items.map((e) => e.device.id).sort(),
				[device(11).id, device(12).id].map((id) => id.toLowerCase()).sort(),
			);
			assert.deepEqual(
				final.items.map((e) => e.id).sort(),
				got.items.map((e) => e.id).sort(),
				'both triggers saw the same events',
			);
			assert.equal(polled.items.length, 2);
		});

		it('deactivating the webhook trigger deletes its hook', async () => {
			await n8n.deactivate(instant.id);
			await n8n.deactivate(polling.id);
			await waitFor('no hook', async () => (await hooksOf()).length === 0, 60_000);
			assert.deepEqual(await hooksOf(), []);
			await control(device(11).id, 'online');
			await control(device(12).id, 'online');
		});
	});
});

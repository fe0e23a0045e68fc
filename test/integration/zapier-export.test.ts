import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { isIP, type AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import request from 'supertest';
import { hashKey } from '../../src/auth/keys.js';
import { sharedFile } from '../../src/export/shared/shared-files.js';
import { installedZapierVersions, zapierApp, zapierCliNode } from '../../src/export/zapier/exporter.js';
import { loadManifest } from '../../src/manifest/load.js';
import { demoDatasetPath, projectRoot } from '../../src/paths.js';
import { formatMicros } from '../../src/time/timestamps.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { listenDemoConnector, type ListeningConnector } from '../helpers/demo-connector.js';
import { ensureBuild } from '../helpers/processes.js';
import { Receiver } from '../helpers/receiver.js';
import { targetPolicy, targetUrlProblem } from '../../src/webhooks/target-guard.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Any = any;

// The Zapier export (`npm run export -- zapier`): the generated app validates against
// zapier-platform-schema and, run by zapier-platform-core's app tester, works against the
// connector on a local port with the demo dataset; the real Zapier CLI validates it and runs
// the app's own tests (`zapier-platform test`) against the connector.

const require = createRequire(import.meta.url);
const demoKey = 'sk_demo_harbor_ana_all_0123456789';
const frontCounter = 'a4:83:e7:1f:2b:01';
const allDayMenu = '7b48454e-a0d5-43ff-923e-6fcd281cd0d9';
const exportCli = join(projectRoot, 'dist', 'src', 'cli', 'export.js');

let tmp: string;
let appDir: string;
let zapier: Any;
let App: Any;
let appTester: (method: unknown, bundle?: Record<string, unknown>) => Promise<Any>;
let t: TestApp;
let connector: ListeningConnector | undefined;
let base: string;
let receiver: Receiver;

/**
 * Writes an app into `dir` and links what `npm install` would give it from this project's
 * node_modules, so the app resolves its dependencies outside the repository.
 */
function writeApp(dir: string, files: Map<string, string>): void {
  for (const [path, text] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  linkModules(dir);
}

function link(target: string, path: string): void {
  if (existsSync(path)) return;
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

/** The app's dependencies and the bins npm would link. */
function linkModules(dir: string): void {
  const modules = join(dir, 'node_modules');
  for (const name of ['zapier-platform-core', 'zapier-platform-cli', 'jest', '@jest/globals']) {
    link(join(projectRoot, 'node_modules', name), join(modules, name));
  }
  link(join(modules, 'jest', 'bin', 'jest.js'), join(modules, '.bin', 'jest'));
  link(join(modules, 'zapier-platform-cli', 'src', 'bin', 'run'), join(modules, '.bin', 'zapier-platform'));
}

/** A bundle as Zapier builds it: the connection (the connector on its local port, the demo key) and `extra`. */
const bundle = (extra: Record<string, unknown> = {}) => ({ authData: { base_url: base, api_key: demoKey }, inputData: {}, meta: {}, ...extra });
const api = (path: string) => request(t.app).get(path).set('X-API-Key', demoKey);

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-zapier-test-'));
  appDir = join(tmp, 'app');
  writeApp(appDir, zapierApp(loadManifest(), { baseUrl: 'https://connector.example.com' }));
  zapier = require(join(appDir, 'node_modules', 'zapier-platform-core'));
  App = require(join(appDir, 'index.js'));
  appTester = zapier.createAppTester(App);

  receiver = await new Receiver().start();
  connector = await listenDemoConnector({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  ({ t, base } = connector);
});

afterAll(async () => {
  await connector?.close();
  await receiver?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the generated app', () => {
  test('is the runtime files of src/export/zapier/template copied as they are, the shared files, plus definition.json and package.json', () => {
    const files = zapierApp(loadManifest(), { baseUrl: 'https://connector.example.com' });
    expect([...files.keys()].sort()).toEqual([
      '.gitignore',
      'README.md',
      'definition.json',
      'index.js',
      'lib/app.js',
      'lib/connector.js',
      'lib/dropdown-trigger.js',
      'lib/events.js',
      'lib/hook-trigger.js',
      'lib/manifest.d.ts',
      'lib/polling-trigger.js',
      'lib/search.js',
      'lib/shape.js',
      'lib/signature.js',
      'lib/types.d.ts',
      'package.json',
      'test/authentication.test.js',
      'test/bad-answers.test.js',
      'test/base-url.test.js',
      'test/dropdowns.test.js',
      'test/harness.js',
      'test/hooks.test.js',
      'test/polling.test.js',
      'test/same-item.test.js',
      'test/searches.test.js',
    ]);
    const runtimeDir = join(projectRoot, 'src', 'export', 'zapier', 'template');
    for (const path of ['index.js', 'lib/app.js', 'lib/hook-trigger.js', 'lib/search.js', 'test/hooks.test.js', 'test/searches.test.js']) {
      expect(files.get(path)).toBe(readFileSync(join(runtimeDir, path), 'utf8'));
    }
    expect(files.get('.gitignore')).toBe(readFileSync(join(runtimeDir, 'gitignore'), 'utf8'));
    // The template's stand-ins are replaced by the shared files: the verification compiled to CommonJS, the manifest types.
    expect(files.get('lib/signature.js')).toBe(sharedFile('standard-webhooks.cjs'));
    expect(files.get('lib/manifest.d.ts')).toBe(sharedFile('manifest.d.ts'));
    const definition = JSON.parse(files.get('definition.json')!);
    expect(definition.connector).toEqual({ name: 'Signage Connector', apiKeyHeader: 'X-API-Key' });
    // The connection: the base URL (the export's as its default) and the key.
    expect(definition.authentication.fields).toEqual([
      expect.objectContaining({ key: 'base_url', type: 'string', required: true, default: 'https://connector.example.com', isNoSecret: true }),
      expect.objectContaining({ key: 'api_key', type: 'password', required: true }),
    ]);
    // Every placeholder of the README template is filled.
    expect(files.get('README.md')).not.toMatch(/\{\{/);
    expect(files.get('README.md')).toContain('https://connector.example.com');
    for (const operation of loadManifest().operations) expect(files.get('README.md')).toContain(`- \`${operation.id}\`: ${operation.title}`);
  });

  test('package.json: exact zapier-platform-core, scripts that call zapier-platform, jest, and Node.js 22 for the CLI', () => {
    const files = zapierApp(loadManifest(), { baseUrl: 'https://connector.example.com' });
    const versions = installedZapierVersions();
    const pkg = JSON.parse(files.get('package.json')!);
    expect(pkg).toEqual({
      name: 'signage-connector-zapier',
      version: loadManifest().version,
      description: loadManifest().description,
      main: 'index.js',
      private: true,
      scripts: { test: 'jest --runInBand --testTimeout 10000', validate: 'zapier-platform validate', push: 'zapier-platform push' },
      engines: { node: versions.nodeEngine },
      dependencies: { 'zapier-platform-core': versions.core },
      devDependencies: { '@jest/globals': versions.jest, jest: versions.jest, node: zapierCliNode, 'zapier-platform-cli': versions.cli },
      // The install scripts npm must run (Node.js 22 for the CLI, esbuild's binary); npm warns about unlisted ones.
      allowScripts: { esbuild: true, node: true },
    });
    expect(versions.core).toMatch(/^\d+\.\d+\.\d+$/);
    expect(versions.cli).toMatch(/^\d+\.\d+\.\d+$/);
    // The CLI's own binary name: `zapier` is not what zapier-platform-cli installs.
    const cli = require('zapier-platform-cli/package.json');
    expect(Object.keys(cli.bin)).toEqual(['zapier-platform']);
    expect(zapierCliNode).toMatch(/^22\./);
  });

  test('validates against zapier-platform-schema', () => {
    const schemaTools = require('zapier-platform-core/src/tools/schema');
    // As `zapier validate` does: compile (resources → triggers), functions → `$func$` markers.
    const definition = schemaTools.serializeApp(schemaTools.compileApp(App));
    const { validateAppDefinition } = require('zapier-platform-schema');
    const result = validateAppDefinition(definition);
    expect(result.errors.map((e: Any) => `${e.property}: ${e.message}`)).toEqual([]);
    expect(schemaTools.validateApp(schemaTools.compileApp(App))).toEqual([]);
  });

  test('is derived from the manifest: auth, hidden dropdown triggers, hook and polling triggers', () => {
    const manifest = loadManifest();
    expect(App.version).toBe(manifest.version);
    expect(App.platformVersion).toBe(zapier.version);
    expect(App.authentication).toMatchObject({
      type: 'custom',
      fields: [
        { key: 'base_url', type: 'string', required: true, default: 'https://connector.example.com' },
        { key: 'api_key', type: 'password', required: true },
      ],
    });
    expect(App.flags).toEqual({ skipHttpPatch: true });

    for (const source of manifest.optionSources) {
      const trigger = App.triggers[`${source.id}_list`];
      expect(trigger).toMatchObject({ key: `${source.id}_list`, noun: source.title, display: { hidden: true }, operation: { canPaginate: true } });
    }
    expect(App.triggers.menu_groups_list.operation.inputFields).toEqual([{ key: 'menu_id', label: 'Menu', required: true, dynamic: 'menus_list.id.name' }]);

    for (const manifestTrigger of manifest.triggers) {
      const hook = App.triggers[manifestTrigger.id];
      const polling = App.triggers[`${manifestTrigger.id}_polling`];
      expect(hook.operation.type).toBe('hook');
      expect(polling.operation.type).toBe('polling');
      for (const trigger of [hook, polling]) {
        expect(trigger.noun).toBe('Device');
        expect(trigger.display.hidden).toBeUndefined();
        expect(trigger.operation.sample).toEqual(manifestTrigger.sample);
        expect(trigger.operation.inputFields).toEqual([
          expect.objectContaining({ key: 'device_ids', list: true, required: false, dynamic: 'devices_list.id.name' }),
        ]);
        const outputs = trigger.operation.outputFields;
        expect(outputs).toHaveLength(manifestTrigger.outputFields.length);
        expect(outputs).toContainEqual({ key: 'id', label: 'Event ID', type: 'string', primary: true });
        expect(outputs).toContainEqual({ key: 'device__name', label: 'Device name', type: 'string' });
        expect(outputs).toContainEqual({ key: 'device__wifi_signal_strength', label: 'Wi-Fi signal strength', type: 'integer' });
        expect(outputs).toContainEqual({ key: 'occurred_at', label: 'Occurred at', type: 'datetime' });
      }
      expect(hook.display.description).toMatch(/^Triggers when/);
      expect(polling.display.label).not.toBe(hook.display.label);
    }
  });

  test('has a search per manifest operation: key = operation id, fields = input keys, dropdowns from the option sources', () => {
    const manifest = loadManifest();
    expect(Object.keys(App.searches)).toEqual(manifest.operations.map((operation) => operation.id));
    expect(Object.keys(App.searches)).toEqual(['get_device', 'list_devices', 'list_menus', 'list_groups', 'get_group']);
    for (const operation of manifest.operations) {
      const search = App.searches[operation.id];
      expect(search).toMatchObject({ key: operation.id, noun: operation.noun, display: { label: operation.title, description: operation.description } });
      expect(search.operation.sample).toEqual(operation.sample);
      expect(search.operation.inputFields.map((field: Any) => field.key)).toEqual(operation.inputs.map((input) => input.key));
      for (const [i, input] of operation.inputs.entries()) {
        const field = search.operation.inputFields[i];
        expect(field).toMatchObject({ key: input.key, label: input.label, type: input.type, required: input.required });
        if (input.optionsFrom) expect(field.dynamic).toBe(`${input.optionsFrom}_list.id.name`);
        else expect(field.dynamic).toBeUndefined();
      }
    }
    const fields = (id: string) => App.searches[id].operation.inputFields;
    expect(fields('get_device')).toEqual([expect.objectContaining({ key: 'device_id', required: true, dynamic: 'devices_list.id.name' })]);
    expect(fields('list_devices')).toEqual([
      expect.objectContaining({ key: 'is_online', type: 'boolean', required: false }),
      expect.objectContaining({ key: 'limit', type: 'integer', required: false, default: '100', helpText: expect.stringMatching(/From 1 to 10000\.$/) }),
    ]);
    expect(fields('list_groups')).toEqual([
      expect.objectContaining({ key: 'menu_id', required: false, dynamic: 'menus_list.id.name' }),
      expect.objectContaining({ key: 'tags', list: true, required: false }),
    ]);
    // The groups dropdown follows the chosen menu.
    expect(fields('get_group')).toEqual([
      expect.objectContaining({ key: 'menu_id', required: true, dynamic: 'menus_list.id.name' }),
      expect.objectContaining({ key: 'group_id', required: true, dynamic: 'menu_groups_list.id.name', dependsOn: ['menu_id'] }),
    ]);
    const definition = require(join(appDir, 'definition.json'));
    expect(definition.optionTriggers.find((t: Any) => t.key === 'menu_groups_list').params).toEqual([
      { name: 'menuId', inputKeys: ['menu_id'], title: 'Menu' },
    ]);
  });

  test('a manifest version Zapier cannot take and a bad base URL are refused', () => {
    const manifest = loadManifest();
    expect(() => zapierApp({ ...manifest, version: '1.0.0-very.long.label' }, { baseUrl: 'http://x' })).toThrow(/not a Zapier app version/);
    expect(() => zapierApp(manifest, { baseUrl: 'ftp://example.com' })).toThrow(/http:\/\/ or https:\/\//);
    expect(() => zapierApp(manifest, { baseUrl: 'not a url' })).toThrow(/not a URL/);
  });
});

describe('run by zapier-platform-core against the connector', () => {
  test("requests go to the connection's base_url, with or without a trailing slash; without one the user must reconnect", async () => {
    const at = (baseUrl: string) => bundle({ authData: { base_url: baseUrl, api_key: demoKey } });
    expect(await appTester(App.authentication.test, at(`${base}/`))).toMatchObject({ account: { name: 'Harbor Street Diner' } });
    expect(await appTester(App.triggers.menus_list.operation.perform, at(`${base}//`))).toHaveLength(2);
    // Nothing listens on port 9 (discard): the request went there, not to the connector.
    await expect(appTester(App.authentication.test, at('http://127.0.0.1:9'))).rejects.toThrow(/ECONNREFUSED/);
    await expect(appTester(App.authentication.test, bundle({ authData: { api_key: demoKey } }))).rejects.toThrow(/no base URL; reconnect/);
    await expect(appTester(App.searches.list_menus.operation.perform, at('ftp://127.0.0.1'))).rejects.toThrow(/must be an http:\/\/ or https:\/\/ URL/);
  });

  test('auth test with the demo key returns the account; the connection label is its name', async () => {
    const me = await appTester(App.authentication.test, bundle());
    expect(me).toEqual({
      key: { id: 'key_ana_all', name: 'Automation (all scopes)', scopes: ['device:read', 'menu:read', 'hooks:write'] },
      account: { id: 'acc_harbor', name: 'Harbor Street Diner' },
    });
    expect(await appTester(App.authentication.connectionLabel, bundle({ inputData: me }))).toBe('Harbor Street Diner');
    // Upstream mode answers account: null; the label falls back to the connector's name.
    expect(await appTester(App.authentication.connectionLabel, bundle({ inputData: { key: { scopes: null }, account: null } }))).toBe('Signage Connector');
  });

  test('a wrong key fails the auth test with the connector message', async () => {
    await expect(appTester(App.authentication.test, bundle({ authData: { base_url: base, api_key: 'sk_wrong_key_0000000000000' } }))).rejects.toThrow(
      /Invalid API key \(HTTP 401 on GET \/v1\/me\)/,
    );
  });

  test('the menus dropdown lists the demo menus of the account', async () => {
    const menus = await appTester(App.triggers.menus_list.operation.perform, bundle());
    const listed = await api('/v1/menus').expect(200);
    const expected = (listed.body.menus as Array<{ id: string; name: string }>)
      .map((m) => ({ id: m.id, name: m.name }))
      .sort((a, b) => a.name.localeCompare(b.name, undefined, { sensitivity: 'base', numeric: true }));
    expect(menus).toEqual(expected);
    expect(menus.map((m: Any) => m.name)).toEqual(['All day', 'Breakfast']);
    // A dropdown's "load more" gets nothing new.
    expect(await appTester(App.triggers.menus_list.operation.perform, bundle({ meta: { page: 1 } }))).toEqual([]);
  });

  test("the groups dropdown lists the chosen menu's groups with path labels", async () => {
    const groups = await appTester(App.triggers.menu_groups_list.operation.perform, bundle({ inputData: { menu_id: allDayMenu } }));
    const options = await api(`/v1/menus/${allDayMenu}/groups/options`).expect(200);
    expect(groups).toEqual((options.body as Array<[string, string]>).map(([label, value]) => ({ id: value, name: label })));
    expect(groups.length).toBeGreaterThan(1);
    expect(groups.some((g: Any) => g.name.includes(' › '))).toBe(true);
  });

  test('the groups dropdown without a menu, or with an unknown one, fails clearly', async () => {
    await expect(appTester(App.triggers.menu_groups_list.operation.perform, bundle())).rejects.toThrow(/choose a Menu first/);
    await expect(
      appTester(App.triggers.menu_groups_list.operation.perform, bundle({ inputData: { menu_id: '00000000-0000-4000-8000-000000000000' } })),
    ).rejects.toThrow(/Menu not found \(HTTP 404/);
  });

  test('the devices dropdown lists the devices the key may read', async () => {
    const devices = await appTester(App.triggers.devices_list.operation.perform, bundle());
    const options = await api('/v1/devices/options').expect(200);
    expect(devices).toEqual((options.body as Array<[string, string]>).map(([label, value]) => ({ id: value, name: label })));
    expect(devices).toContainEqual({ id: frontCounter, name: 'Front counter' });
  });

  test('dropdowns page: with pages of one choice, "load more" brings the next menu, then nothing', async () => {
    const { buildApp } = require(join(appDir, 'lib', 'app.js'));
    const definition = JSON.parse(readFileSync(join(appDir, 'definition.json'), 'utf8'));
    for (const trigger of definition.optionTriggers) trigger.pageSize = 1;
    const smallApp = buildApp(definition, zapier.version);
    const small = zapier.createAppTester(smallApp);
    // The app tester has no cursor store: each page is found by following the cursors.
    const page = (n: number) => small(smallApp.triggers.menus_list.operation.perform, bundle({ meta: { page: n } }));
    expect(await page(0)).toEqual([{ id: allDayMenu, name: 'All day' }]);
    expect(await page(1)).toEqual([{ id: expect.any(String), name: 'Breakfast' }]);
    expect(await page(2)).toEqual([]);
  });

  test('searches return what the connector answers: get_device, list_menus, list_groups, get_group', async () => {
    const search = (key: string, inputData: Record<string, unknown> = {}) => appTester(App.searches[key].operation.perform, bundle({ inputData }));
    const device = await request(t.app).get(`/devices/${frontCounter}`).set('Authorization', `Bearer ${demoKey}`).expect(200);
    expect(await search('get_device', { device_id: frontCounter.toUpperCase() })).toEqual([device.body]);
    expect(await search('get_device', { device_id: 'fe:ed:fa:ce:00:00' })).toEqual([]);
    await expect(search('get_device')).rejects.toThrow(/Device \(device_id\) is required/);

    expect(await search('list_menus')).toEqual((await api('/v1/menus').expect(200)).body.menus);
    expect(await search('list_groups', { menu_id: allDayMenu })).toEqual((await api(`/v1/groups?menus=${allDayMenu}`).expect(200)).body.groups);
    expect(await search('list_groups', { tags: 'temperature:*' })).toEqual((await api('/v1/groups?tags=temperature:*').expect(200)).body.groups);

    const groups = await appTester(App.triggers.menu_groups_list.operation.perform, bundle({ inputData: { menu_id: allDayMenu } }));
    const nested = groups.find((g: Any) => g.name.includes(' › '));
    const found = await search('get_group', { menu_id: allDayMenu, group_id: nested.id });
    expect(found).toEqual((await api(`/v1/groups?menus=${allDayMenu}&groups=${nested.id}`).expect(200)).body.groups);
    expect(found).toHaveLength(1);
    expect(await search('get_group', { menu_id: allDayMenu, group_id: '00000000-0000-4000-8000-000000000000' })).toEqual([]);
  });

  test('list_devices reads every page up to the limit, each device once, in the connector order', async () => {
    const { buildApp } = require(join(appDir, 'lib', 'app.js'));
    const definition = JSON.parse(readFileSync(join(appDir, 'definition.json'), 'utf8'));
    // Pages of two devices, so that a handful of devices takes several pages.
    definition.searches.find((s: Any) => s.key === 'list_devices').paging.maxSize = 2;
    const smallApp = buildApp(definition, zapier.version);
    const small = zapier.createAppTester(smallApp);
    const list = (inputData: Record<string, unknown>) => small(smallApp.searches.list_devices.operation.perform, bundle({ inputData }));
    const all = await request(t.app).get('/devices?page_size=1000').set('Authorization', `Bearer ${demoKey}`).expect(200);
    expect(all.body.total).toBeGreaterThan(5);
    expect(await list({ limit: 5 })).toEqual(all.body.data.slice(0, 5));
    expect(await list({ limit: '10000' })).toEqual(all.body.data);
    const offline = await request(t.app).get('/devices?is_online=false&page_size=1000').set('Authorization', `Bearer ${demoKey}`).expect(200);
    expect(await list({ is_online: false, limit: 1000 })).toEqual(offline.body.data);
    // The default app asks for as many as the limit in one page.
    expect(await appTester(App.searches.list_devices.operation.perform, bundle())).toEqual(all.body.data.slice(0, 100));
    await expect(list({ limit: 10001 })).rejects.toThrow(/Limit \(limit\) must be a whole number from 1 to 10000/);
  });

  test('REST hook: subscribe creates a hook, a delivery becomes the event, unsubscribe leaves no hook', async () => {
    const trigger = App.triggers.device_offline.operation;
    const keyHash = hashKey(demoKey);
    expect(await t.services.hooks.list(keyHash)).toEqual([]);

    const hook = await appTester(trigger.performSubscribe, bundle({ targetUrl: receiver.url, inputData: { device_ids: [frontCounter.toUpperCase()] } }));
    expect(hook).toMatchObject({ target_url: receiver.url, events: ['device.offline'], device_ids: [frontCounter], status: 'active' });
    expect(hook.secret).toMatch(/^whsec_/);
    const hooks = await api('/v1/hooks').expect(200);
    expect(hooks.body).toEqual([expect.objectContaining({ id: hook.id, target_url: receiver.url })]);

    // The first poll after subscribing is the baseline; then Front counter times out.
    await pollDue(t);
    t.clock.advance(t.config.HEARTBEAT_TIMEOUT_MS);
    expect((await pollDue(t)).events).toBeGreaterThan(0);
    await t.services.deliverer.drain();
    expect(receiver.received).toHaveLength(1);
    const delivery = receiver.received[0]!;
    const payload = JSON.parse(delivery.body);
    expect(payload).toMatchObject({ type: 'device.offline', data: { type: 'device.offline', device: { id: frontCounter } } });

    // What Zapier hands to perform: the parsed body, and the raw request with Http- headers.
    const rawRequest = {
      method: 'POST',
      querystring: '',
      headers: {
        'Content-Type': 'application/json',
        'Http-Webhook-Id': delivery.headers['webhook-id'],
        'Http-Webhook-Timestamp': delivery.headers['webhook-timestamp'],
        'Http-Webhook-Signature': delivery.headers['webhook-signature'],
      },
      content: delivery.body,
    };
    const performed = await appTester(trigger.perform, bundle({ cleanedRequest: payload, rawRequest, subscribeData: hook }));
    expect(performed).toEqual([payload.data]);
    // Without the raw request (or a secret) the parsed body is taken as it is.
    expect(await appTester(trigger.perform, bundle({ cleanedRequest: payload }))).toEqual([payload.data]);
    // A body that was not signed with the hook's secret is refused.
    const forged = { ...rawRequest, content: delivery.body.replace('Front counter', 'Back counter') };
    await expect(appTester(trigger.perform, bundle({ cleanedRequest: payload, rawRequest: forged, subscribeData: hook }))).rejects.toThrow(
      /signature does not match/,
    );
    const unsigned = { ...rawRequest, headers: { 'Content-Type': 'application/json' } };
    await expect(appTester(trigger.perform, bundle({ cleanedRequest: payload, rawRequest: unsigned, subscribeData: hook }))).rejects.toThrow(
      /signature headers are missing/,
    );
    // Another trigger's event type is not this trigger's item.
    expect(await appTester(App.triggers.device_online.operation.perform, bundle({ cleanedRequest: payload }))).toEqual([]);

    const gone = await appTester(trigger.performUnsubscribe, bundle({ subscribeData: hook }));
    expect(gone).toEqual({ id: hook.id, unsubscribed: true });
    expect(await t.services.hooks.list(keyHash)).toEqual([]);
    await api('/v1/hooks').expect(200, []);
    // Unsubscribing again (Zapier retries) is not an error.
    await expect(appTester(trigger.performUnsubscribe, bundle({ subscribeData: hook }))).resolves.toEqual({ id: hook.id, unsubscribed: true });
  });

  test('polling trigger: [] at first (baseline), then the offline event with an id; performList returns it too', async () => {
    const fresh = await buildTestApp({
      dataset: JSON.parse(readFileSync(demoDatasetPath, 'utf8')),
      clock: new ManualClock(Date.now()),
    });
    const freshServer = fresh.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => freshServer.once('listening', () => resolve()));
    const freshBase = `http://127.0.0.1:${(freshServer.address() as AddressInfo).port}`;
    const bundle = (extra: Record<string, unknown> = {}) => ({ authData: { base_url: freshBase, api_key: demoKey }, inputData: {}, meta: {}, ...extra });
    try {
      const polling = App.triggers.device_offline_polling.operation;
      const onlyFront = { device_ids: [frontCounter] };
      expect(await appTester(polling.perform, bundle({ inputData: onlyFront }))).toEqual([]);
      // The Zap editor's test of an empty trigger gets samples of the trigger's type instead.
      const samples = await appTester(polling.perform, bundle({ inputData: onlyFront, meta: { isLoadingSample: true } }));
      for (const sample of samples) expect(sample).toMatchObject({ type: 'device.offline', sample: true });

      fresh.clock.advance(fresh.config.HEARTBEAT_TIMEOUT_MS);
      expect((await pollDue(fresh)).events).toBeGreaterThan(0);
      const events = await appTester(polling.perform, bundle({ inputData: onlyFront }));
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        type: 'device.offline',
        previous_status: 'online',
        status: 'offline',
        device: { id: frontCounter, name: 'Front counter' },
      });
      expect(events[0].id).toEqual(expect.any(String));
      const direct = await request(fresh.app)
        .get(`/v1/triggers/device-status?type=device.offline&devices=${frontCounter}`)
        .set('X-API-Key', demoKey)
        .expect(200);
      expect(events).toEqual(direct.body);

      // Without a device filter: every offline event of the key, newest first, and no online ones.
      const all = await appTester(polling.perform, bundle());
      expect(all.length).toBeGreaterThan(1);
      expect(all.every((e: Any) => e.type === 'device.offline')).toBe(true);
      expect(new Set(all.map((e: Any) => e.id)).size).toBe(all.length);

      // performList of the REST hook ("load samples") reads the same endpoint.
      expect(await appTester(App.triggers.device_offline.operation.performList, bundle({ inputData: onlyFront }))).toEqual(events);

      // Front counter comes back: the online polling trigger sees it.
      await fresh.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', formatMicros(fresh.clock.now() * 1000), frontCounter);
      await pollDue(fresh);
      const online = await appTester(App.triggers.device_online_polling.operation.perform, bundle({ inputData: { device_ids: frontCounter } }));
      expect(online).toEqual([expect.objectContaining({ type: 'device.online', status: 'online', device: expect.objectContaining({ id: frontCounter }) })]);
    } finally {
      freshServer.closeAllConnections();
      await new Promise<void>((resolve) => freshServer.close(() => resolve()));
      await fresh.close();
    }
  });

  test('performList falls back to samples of its own type when nothing happened yet', async () => {
    const fresh = await buildTestApp({ dataset: JSON.parse(readFileSync(demoDatasetPath, 'utf8')), clock: new ManualClock(Date.now()) });
    const freshServer = fresh.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => freshServer.once('listening', () => resolve()));
    const freshBase = `http://127.0.0.1:${(freshServer.address() as AddressInfo).port}`;
    const bundle = (extra: Record<string, unknown> = {}) => ({ authData: { base_url: freshBase, api_key: demoKey }, inputData: {}, meta: {}, ...extra });
    try {
      const sampleRes = await request(fresh.app).get('/v1/triggers/device-status/sample').set('X-API-Key', demoKey).expect(200);
      for (const id of ['device_offline', 'device_online']) {
        const type = id === 'device_offline' ? 'device.offline' : 'device.online';
        const listed = await appTester(App.triggers[id].operation.performList, bundle());
        expect(listed).toEqual((sampleRes.body as Array<{ type: string }>).filter((e) => e.type === type));
      }
      expect(sampleRes.body.length).toBeGreaterThan(0);
    } finally {
      freshServer.closeAllConnections();
      await new Promise<void>((resolve) => freshServer.close(() => resolve()));
      await fresh.close();
    }
  });
});

describe('run by zapier-platform-core against a server that answers badly', () => {
  // What a proxy or a broken deployment in front of the connector may do: a 200 with a body
  // that is not JSON or not the shape the app reads, or no answer at all. Each is a clear
  // error, never an empty list, a bad object as a record, or a passed connection test.
  let bad: Server;
  let badBase: string;
  let answer: string | null = null;
  const badBundle = (extra: Record<string, unknown> = {}) => ({ authData: { base_url: badBase, api_key: demoKey }, inputData: {}, meta: {}, ...extra });

  beforeAll(async () => {
    // Generous while answers come at once (a busy machine is not a hanging server).
    process.env.CONNECTOR_TIMEOUT_MS = '15000';
    bad = createServer((req, res) => {
      req.resume();
      if (answer !== null) res.writeHead(200, { 'content-type': 'application/json' }).end(answer);
    });
    await new Promise<void>((resolve) => bad.listen(0, '127.0.0.1', () => resolve()));
    badBase = `http://127.0.0.1:${(bad.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    delete process.env.CONNECTOR_TIMEOUT_MS;
    bad.closeAllConnections();
    await new Promise<void>((resolve) => bad.close(() => resolve()));
  });

  test('invalid JSON fails the connection test, a dropdown and a search', async () => {
    answer = '<html>Bad gateway</html>';
    await expect(appTester(App.authentication.test, badBundle())).rejects.toThrow(/not valid JSON \(HTTP 200 on GET \/v1\/me\)/);
    await expect(appTester(App.triggers.devices_list.operation.perform, badBundle())).rejects.toThrow(/not valid JSON/);
    await expect(appTester(App.searches.list_menus.operation.perform, badBundle())).rejects.toThrow(/not valid JSON/);
  });

  test('the wrong shape fails: an empty object as the account, an object as a list, a device without an id', async () => {
    answer = '{}';
    await expect(appTester(App.authentication.test, badBundle())).rejects.toThrow(/unexpected answer .*expected an object with 'key'/);
    await expect(appTester(App.triggers.devices_list.operation.perform, badBundle())).rejects.toThrow(/expected a list, got an object/);
    await expect(appTester(App.triggers.device_offline_polling.operation.perform, badBundle())).rejects.toThrow(/expected a list, got an object/);
    await expect(appTester(App.searches.list_devices.operation.perform, badBundle())).rejects.toThrow(/field 'data': expected a list, got nothing/);
    answer = JSON.stringify({ name: 'Front counter' });
    await expect(appTester(App.searches.get_device.operation.perform, badBundle({ inputData: { device_id: frontCounter } }))).rejects.toThrow(
      /expected an object with 'id'/,
    );
    await expect(appTester(App.triggers.device_offline.operation.performSubscribe, badBundle({ targetUrl: 'https://example.com/hook' }))).rejects.toThrow(
      /expected an object with 'id'/,
    );
  });

  test('no answer within CONNECTOR_TIMEOUT_MS fails with a timeout, not a hang', async () => {
    answer = null;
    process.env.CONNECTOR_TIMEOUT_MS = '300';
    await expect(appTester(App.authentication.test, badBundle())).rejects.toThrow(/no answer from the connector within 0.3 s \(GET \/v1\/me\)/);
    await expect(appTester(App.searches.list_devices.operation.perform, badBundle())).rejects.toThrow(/no answer from the connector within 0.3 s/);
  });
});

describe('npm run export -- zapier', () => {
  interface Result {
    code: number | null;
    stdout: string;
    stderr: string;
  }

  const run = (args: string[], timeoutMs = 30_000): Promise<Result> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, args, {
        cwd: projectRoot,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });

  beforeAll(async () => {
    await ensureBuild();
  }, 180_000);

  test('writes the app into a new folder and says how to push it', async () => {
    const out = join(tmp, 'cli', 'nested', 'zapier-app');
    const result = await run([exportCli, 'zapier', '--out', out, '--base-url', 'https://signage.example.com/']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const expected = zapierApp(loadManifest(), { baseUrl: 'https://signage.example.com' });
    for (const [path, text] of expected) {
      expect(readFileSync(join(out, path), 'utf8')).toBe(text);
      expect(result.stdout).toContain(path);
    }
    expect(result.stdout).toContain(`cd ${out}\n  npm install`);
    expect(result.stdout).toContain('npx zapier-platform validate --without-style');
    expect(result.stdout).toContain('npx zapier-platform push');
    expect(result.stdout).not.toMatch(/zapier push|zapier validate/);
    expect(JSON.parse(readFileSync(join(out, 'definition.json'), 'utf8')).authentication.fields[0]).toMatchObject({
      key: 'base_url',
      default: 'https://signage.example.com',
    });

    // The written app loads and validates like the in-process one.
    linkModules(out);
    const written = require(join(out, 'index.js'));
    const schemaTools = require('zapier-platform-core/src/tools/schema');
    expect(schemaTools.validateApp(schemaTools.compileApp(written))).toEqual([]);
  });

  test('the default base URL is http://localhost:3000', async () => {
    const out = join(tmp, 'cli-default');
    const result = await run([exportCli, 'zapier', '--out', out]);
    expect(result.code).toBe(0);
    expect(JSON.parse(readFileSync(join(out, 'definition.json'), 'utf8')).authentication.fields[0]).toMatchObject({
      key: 'base_url',
      default: 'http://localhost:3000',
    });
  });

  test.each([
    [[], /Missing the platform/],
    [['workato', '--out', 'x'], /Unknown platform "workato"/],
    [['zapier'], /Missing --out/],
    [['zapier', '--out'], /argument missing|--out/],
    [['zapier', '--out', 'x', '--verbose'], /Unknown option '--verbose'/],
    [['zapier', 'extra', '--out', 'x'], /Unexpected argument "extra"/],
    [['zapier', '--out', 'x', '--base-url', 'ftp://example.com'], /must be http:\/\/ or https:\/\//],
  ])('bad arguments %j exit 1 with the usage line', async (args, message) => {
    const result = await run([exportCli, ...(args as string[])]);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(message as RegExp);
    expect(result.stderr).toContain('Usage: npm run export -- <platform> --out <dir> [--base-url <url>]');
    expect(result.stdout).toBe('');
  });
});

// `zapier-platform validate` and `zapier-platform test` (the app's whole suite, on the Node.js 22
// the app installs) run in `npm run test:platforms -- zapier` (src/cli/test-platforms.ts), not here.
describe("the app's hook tests, against a connector on a local port", () => {
  let cliApp: string;

  beforeAll(() => {
    cliApp = join(tmp, 'cli-app');
    writeApp(cliApp, zapierApp(loadManifest(), { baseUrl: 'https://connector.example.com' }));
    linkModules(cliApp);
  });

  /** Runs a command in the app's folder the way a user's shell would after `npm install`. */
  const runInApp = (command: string, args: string[], envOverrides: Record<string, string | undefined> = {}): Promise<{ code: number | null; output: string }> =>
    new Promise((resolve, reject) => {
      const home = join(tmp, 'home');
      mkdirSync(home, { recursive: true });
      const child = spawn(command, args, {
        cwd: cliApp,
        env: {
          PATH: `${join(cliApp, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? '/usr/bin:/bin'}`,
          HOME: home,
          CONNECTOR_API_KEY: demoKey,
          TEST_TARGET_URL: receiver.url,
          // Offline: no usage analytics to zapier.com, no update check.
          DISABLE_ZAPIER_ANALYTICS: '1',
          NO_UPDATE_NOTIFIER: '1',
          NO_COLOR: '1',
          ...envOverrides,
        },
        timeout: 150_000,
        killSignal: 'SIGKILL',
      });
      let output = '';
      child.stdout.on('data', (chunk) => (output += chunk));
      child.stderr.on('data', (chunk) => (output += chunk));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, output }));
    });

  test('the hook tests pass against a connector with the default target rules and TEST_TARGET_URL unset, with no DNS look-up', async () => {
    // The default target is an IP literal the default rules accept: nothing is resolved, so this
    // holds on a machine without DNS (the default was https://example.com, which needs it).
    const harness = readFileSync(join(cliApp, 'test', 'harness.js'), 'utf8');
    const fallback = harness.match(/process\.env\.TEST_TARGET_URL \|\| '([^']+)'/)?.[1];
    expect(fallback).toBeDefined();
    expect(isIP(new URL(fallback!).hostname)).not.toBe(0);
    expect(targetUrlProblem(fallback!, targetPolicy(false))).toBeNull();
    const strict = await buildTestApp({ dataset: JSON.parse(readFileSync(demoDatasetPath, 'utf8')), clock: new ManualClock(Date.now()) });
    const server = strict.app.listen(0, '127.0.0.1');
    try {
      await new Promise<void>((resolve) => server.once('listening', () => resolve()));
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const jest = join(cliApp, 'node_modules', 'jest', 'bin', 'jest.js');
      const result = await runInApp(process.execPath, [jest, '--runInBand', '--testTimeout', '10000', 'test/hooks.test.js'], {
        CONNECTOR_BASE_URL: base,
        TEST_TARGET_URL: undefined,
      });
      if (result.code !== 0) throw new Error(`the app's hook tests failed (${result.code}):\n${result.output}`);
      expect(result.output).toMatch(/Tests:\s+\d+ passed/);
      await request(strict.app).get('/v1/hooks').set('X-API-Key', demoKey).expect(200, []);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await strict.close();
    }
  }, 180_000);
});

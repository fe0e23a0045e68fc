import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ExportError } from '../../src/export/shared/export-error.js';
import { makeApp } from '../../src/export/make/exporter.js';
import { loadManifest } from '../../src/manifest/load.js';
import { projectRoot } from '../../src/paths.js';
import { listenDemoConnector, type ListeningConnector } from '../helpers/demo-connector.js';

// The Make export (`npm run export -- make`): the files Make's VS Code extension deploys, named
// from the manifest, and the app's own tests (structure against the extension's schemas, every
// request built from the templates) run against a connector on a local port with the demo data.

const demoKey = 'sk_demo_harbor_ana_all_0123456789';
const baseUrl = 'https://connector.example.com';

let tmp: string;
let connector: ListeningConnector | undefined;
let base: string;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-make-test-'));
  connector = await listenDemoConnector({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' });
  ({ base } = connector);
});

afterAll(async () => {
  await connector?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the generated Make app', () => {
  const files = makeApp(loadManifest(), { baseUrl });
  const json = (path: string) => JSON.parse(files.get(path)!);

  test('lists a component per option source, operation and trigger, named from the manifest ids', () => {
    const app = json('makecomapp.json');
    expect(Object.keys(app.components.connection)).toEqual(['signage-connector']);
    expect(Object.keys(app.components.rpc).sort()).toEqual(['devices', 'menuGroups', 'menus']);
    const modules = Object.fromEntries(
      Object.entries(app.components.module as Record<string, { moduleType: string }>).map(([name, m]) => [name, m.moduleType]),
    );
    expect(modules).toEqual({
      getDevice: 'search',
      listDevices: 'search',
      listMenus: 'search',
      listGroups: 'search',
      getGroup: 'search',
      deviceOffline: 'instant_trigger',
      deviceOfflinePolling: 'trigger',
      deviceOnline: 'instant_trigger',
      deviceOnlinePolling: 'trigger',
    });
    expect(app.components.module.deviceOffline.webhook).toBe('device-offline');
    expect(Object.keys(app.components.webhook).sort()).toEqual(['device-offline', 'device-online']);
    for (const [, metadata] of Object.entries(app.components.module as Record<string, { codeFiles: Record<string, string> }>)) {
      for (const path of Object.values(metadata.codeFiles)) expect(files.has(path)).toBe(true);
    }
  });

  test('input keys are the parameter names; the key goes in the header each area reads', () => {
    const getGroup = json('modules/get-group/get-group.mappable-params.iml.json');
    expect(getGroup[0]).toMatchObject({
      name: 'menu_id',
      type: 'select',
      options: { store: 'rpc://menus', nested: [{ name: 'group_id', options: 'rpc://menuGroups' }] },
    });
    expect(json('modules/get-device/get-device.communication.iml.json')).toMatchObject({
      url: '/devices/{{parameters.device_id}}',
      headers: { Authorization: 'Bearer {{connection.api_key}}' },
    });
    expect(json('modules/list-menus/list-menus.communication.iml.json').headers).toEqual({ 'X-API-Key': '{{connection.api_key}}' });
    expect(json('connections/signage-connector/signage-connector.params.iml.json').map((p: { name: string; type: string }) => [p.name, p.type])).toEqual([
      ['base_url', 'url'],
      ['api_key', 'password'],
    ]);
    expect(json('connections/signage-connector/signage-connector.params.iml.json')[0].default).toBe(baseUrl);
    expect(json('webhooks/device-offline/device-offline.attach.iml.json').body).toEqual({
      events: ['device.offline'],
      target_url: '{{webhook.url}}',
      device_ids: '{{ifempty(parameters.device_ids; null)}}',
    });
    expect(files.get('README.md')).not.toMatch(/\{\{[A-Z][A-Z0-9_]*\}\}/);
    expect(files.get('general/readme.md')).not.toMatch(/\{\{[A-Z][A-Z0-9_]*\}\}/);
  });

  test('refuses a base URL it cannot use', () => {
    expect(() => makeApp(loadManifest(), { baseUrl: 'ftp://example.com' })).toThrow(ExportError);
  });

  test("the app's own tests pass against the connector", async () => {
    const appDir = join(tmp, 'app');
    for (const [path, text] of files) {
      mkdirSync(dirname(join(appDir, path)), { recursive: true });
      writeFileSync(join(appDir, path), text);
    }
    mkdirSync(join(appDir, 'node_modules'), { recursive: true });
    symlinkSync(join(projectRoot, 'node_modules', 'ajv'), join(appDir, 'node_modules', 'ajv'));
    const tests = ['structure', 'connection', 'rpcs', 'searches', 'webhooks'].map((name) => `test/${name}.test.js`);
    const output: string[] = [];
    const code = await new Promise<number | null>((resolve) => {
      const child = spawn(process.execPath, ['--test', '--test-concurrency=1', ...tests], {
        cwd: appDir,
        env: { PATH: process.env.PATH ?? '', CONNECTOR_BASE_URL: base, CONNECTOR_API_KEY: demoKey },
      });
      child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
      child.once('exit', resolve);
    });
    const text = output.join('');
    expect({ code, failures: text.split('\n').filter((line) => /^\s*not ok/.test(line)) }).toEqual({ code: 0, failures: [] });
    expect(text).toMatch(/# fail 0/);
  }, 120_000);
});

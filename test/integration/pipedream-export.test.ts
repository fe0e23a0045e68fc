import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import request from 'supertest';
import { ExportError } from '../../src/export/shared/export-error.js';
import { pipedreamApp, pipedreamRuntimeDir } from '../../src/export/pipedream/exporter.js';
import { exporters } from '../../src/export/platforms.js';
import { sharedFile } from '../../src/export/shared/shared-files.js';
import { loadManifest } from '../../src/manifest/load.js';
import type { Manifest } from '../../src/manifest/schema.js';
import type { TestApp } from '../helpers/app.js';
import { listenDemoConnector, type ListeningConnector } from '../helpers/demo-connector.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
type Any = any;

// The Pipedream export (`npm run export -- pipedream`): components generated from the manifest
// with the names the manifest gives, the shared code copied as it is, and the generated code run
// with the app's own test harness against the connector on a local port. `npm run
// test:platforms -- pipedream` installs the app and runs its full tests, lint included.

const demoKey = 'sk_demo_harbor_ana_all_0123456789';
const frontCounter = 'a4:83:e7:1f:2b:01';
const baseUrl = 'https://connector.example.com';

let tmp: string;
let t: TestApp;
let connector: ListeningConnector | undefined;
let base: string;

/**
 * A stand-in for @pipedream/platform (not a dependency of this project): its `axios(step,
 * config)` contract, on fetch: the body (a body that is not JSON as text, as axios leaves it),
 * or the whole response with `returnFullResponse`; a 4xx/5xx throws an error carrying
 * `response`; past `timeout` an error with axios's code ECONNABORTED. The app's own tests use
 * the real package.
 */
const platformStub = `
export const DEFAULT_POLLING_SOURCE_TIMER_INTERVAL = 900;
export async function axios(_step, config) {
  const url = new URL(config.url);
  for (const [name, value] of Object.entries(config.params ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
  const headers = { ...config.headers, ...(config.data ? { "content-type": "application/json" } : {}) };
  const signal = config.timeout ? AbortSignal.timeout(config.timeout) : undefined;
  let response;
  let text;
  try {
    response = await fetch(url, { method: config.method ?? "GET", headers, body: config.data ? JSON.stringify(config.data) : undefined, signal });
    text = await response.text();
  } catch (err) {
    if (err.name === "TimeoutError") throw Object.assign(new Error("timeout of " + config.timeout + "ms exceeded"), { code: "ECONNABORTED" });
    throw err;
  }
  let data = text;
  try {
    data = text ? JSON.parse(text) : "";
  } catch {
    // not JSON: axios keeps the text
  }
  const full = { status: response.status, headers: Object.fromEntries(response.headers), data };
  if (response.status >= 400) throw Object.assign(new Error("Request failed with status code " + response.status), { response: full });
  return config.returnFullResponse ? full : data;
}
`;

function writeApp(dir: string, files: Map<string, string>): void {
  for (const [path, text] of files) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  const stub = join(dir, 'node_modules', '@pipedream', 'platform');
  mkdirSync(stub, { recursive: true });
  writeFileSync(join(stub, 'package.json'), JSON.stringify({ name: '@pipedream/platform', type: 'module', main: 'index.js' }));
  writeFileSync(join(stub, 'index.js'), platformStub);
}

/** Runs one of the app's own test files with node --test against the connector; its exit code and output. */
function runAppTest(dir: string, file: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--test', file],
      { cwd: dir, env: { PATH: process.env.PATH ?? '', CONNECTOR_BASE_URL: base, CONNECTOR_API_KEY: demoKey }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

/** Runs `script` (ESM, in the app folder, with the app's test harness at hand) and parses what it prints. */
function runInApp(dir: string, script: string): Promise<Any> {
  writeFileSync(join(dir, 'probe.mjs'), script);
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['probe.mjs'],
      { cwd: dir, env: { PATH: process.env.PATH ?? '', CONNECTOR_BASE_URL: base, CONNECTOR_API_KEY: demoKey }, timeout: 15_000 },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    );
  });
}

const api = (path: string) => request(t.app).get(path).set('X-API-Key', demoKey);

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-pipedream-test-'));
  connector = await listenDemoConnector();
  ({ t, base } = connector);
});

afterAll(async () => {
  await connector?.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the generated app', () => {
  const manifest = loadManifest();
  const files = pipedreamApp(manifest, { baseUrl });

  test('has the app file, an action per operation, an instant and a polling source per trigger', () => {
    const generated = [...files.keys()].filter((path) => /^(actions|sources)\/|\.app\.mjs$/.test(path));
    expect(generated.sort()).toEqual(
      [
        'signage_connector.app.mjs',
        ...manifest.operations.map((op) => `actions/${op.id.replace(/_/g, '-')}/${op.id.replace(/_/g, '-')}.mjs`),
        ...manifest.triggers.flatMap((trigger) => {
          const slug = trigger.id.replace(/_/g, '-');
          return [`sources/${slug}/${slug}.mjs`, `sources/${slug}-polling/${slug}-polling.mjs`];
        }),
      ].sort(),
    );
    for (const path of ['common/connector.mjs', 'common/instant-source.mjs', 'common/polling-source.mjs', 'test/harness.mjs', 'eslint.config.mjs']) {
      expect(files.get(path)).toBe(readFileSync(join(pipedreamRuntimeDir, path), 'utf8'));
    }
    expect(files.get('.gitignore')).toBe(readFileSync(join(pipedreamRuntimeDir, 'gitignore'), 'utf8'));
    expect(files.get('common/signature.mjs')).toBe(sharedFile('standard-webhooks.mjs'));
    expect(files.get('README.md')).not.toMatch(/\{\{/);
    expect(files.get('README.md')).toContain('signage_connector-get-device');
    expect(files.get('common/constants.mjs')).toContain(`defaultBaseUrl: "${baseUrl}"`);
  });

  test('names components and props as the manifest does', () => {
    for (const op of manifest.operations) {
      const slug = op.id.replace(/_/g, '-');
      const text = files.get(`actions/${slug}/${slug}.mjs`)!;
      expect(text).toContain(`key: "signage_connector-${slug}",`);
      expect(text).toContain('type: "action",');
      for (const input of op.inputs) expect(text).toMatch(new RegExp(`^    ${input.key}: \\{$`, 'm'));
    }
    for (const trigger of manifest.triggers) {
      const slug = trigger.id.replace(/_/g, '-');
      expect(files.get(`sources/${slug}/${slug}.mjs`)).toContain(`key: "signage_connector-${slug}",`);
      expect(files.get(`sources/${slug}-polling/${slug}-polling.mjs`)).toContain(`key: "signage_connector-${slug}-polling",`);
    }
    const appFile = files.get('signage_connector.app.mjs')!;
    for (const source of manifest.optionSources) expect(appFile).toContain(`path: "${source.path}",`);
    // The groups dropdown of get_group follows its menu prop.
    expect(files.get('actions/get-group/get-group.mjs')).toContain('(c) => ({ menuId: c.menu_id }),');
    const pkg = JSON.parse(files.get('package.json')!);
    expect(pkg.devDependencies['@pipedream/eslint-plugin-pipedream']).toBe('0.3.0');
    expect(pkg.dependencies['@pipedream/platform']).toMatch(/^\d/);
    expect(pkg.scripts.test).toMatch(/^eslint \. && node --test/);
  });

  test('a new operation, option source or trigger in the manifest becomes a component without code changes', () => {
    const changed: Manifest = structuredClone(manifest);
    changed.operations.push({ ...structuredClone(manifest.operations[0]!), id: 'get_screen', title: 'Find screen' });
    changed.optionSources.push({ ...structuredClone(manifest.optionSources[2]!), id: 'screens', path: '/v1/screens/options' });
    changed.triggers.push({ ...structuredClone(manifest.triggers[0]!), id: 'screen_dark' });
    const out = pipedreamApp(changed, { baseUrl });
    expect(out.get('actions/get-screen/get-screen.mjs')).toContain('key: "signage_connector-get-screen",');
    expect(out.get('signage_connector.app.mjs')).toMatch(/^ {4}screens: \{$/m);
    expect(out.get('sources/screen-dark-polling/screen-dark-polling.mjs')).toContain('key: "signage_connector-screen-dark-polling",');
  });

  test('refuses what Pipedream cannot hold', () => {
    expect(() => pipedreamApp(manifest, { baseUrl: 'ftp://x' })).toThrow(ExportError);
    const clash: Manifest = structuredClone(manifest);
    clash.operations[0]!.inputs[0]!.key = 'db';
    expect(() => pipedreamApp(clash, { baseUrl })).toThrow(/cannot be called db/);
    const twice: Manifest = structuredClone(manifest);
    twice.triggers.push({ ...structuredClone(manifest.triggers[0]!), id: 'get_device' });
    expect(() => pipedreamApp(twice, { baseUrl })).toThrow(/signage_connector-get-device/);
  });

  test('is registered for npm run export', () => {
    expect(exporters.pipedream.title).toBe('Pipedream');
    expect(exporters.pipedream.nextSteps('app', manifest, { baseUrl })).toContain('pd publish');
  });
});

describe('the generated code against the connector', () => {
  let appDir: string;

  beforeAll(() => {
    appDir = join(tmp, 'app');
    writeApp(appDir, pipedreamApp(loadManifest(), { baseUrl }));
  });

  test('an action, a paged list, a dropdown page and its search, and the connection test', async () => {
    const out = await runInApp(
      appDir,
      `
import { instantiate, loadComponents, propOptions, appInstance } from "./test/harness.mjs";
const { app, components } = await loadComponents();
const device = await instantiate(components.get("signage_connector-get-device"), { props: { device_id: "${frontCounter.toUpperCase()}" } }).run();
const list = await instantiate(components.get("signage_connector-list-devices"), { props: { limit: 3 } }).run();
const action = components.get("signage_connector-get-device");
const page1 = await propOptions(action, "device_id", {}, { prevContext: {} });
const search = await propOptions(action, "device_id", {}, { query: "COUNTER", prevContext: {} });
const connection = await appInstance(app).testConnection();
console.log(JSON.stringify({ device, list, page1, search, connection }));
`,
    );
    expect(out.device).toEqual((await request(t.app).get(`/devices/${frontCounter}`).set('Authorization', `Bearer ${demoKey}`)).body);
    expect(out.list).toEqual((await request(t.app).get('/devices?page_size=3').set('Authorization', `Bearer ${demoKey}`)).body.data);
    const direct = await api('/v1/devices/options?format=objects&limit=100');
    expect(out.page1.options).toEqual(direct.body);
    expect(out.search.options.length).toBeGreaterThan(0);
    for (const option of out.search.options) expect(option.label.toLowerCase()).toContain('counter');
    expect(out.connection.label).toBe((await api('/v1/me')).body.account.name);
  });

  test("a server that answers 200 badly, or never: every component fails with a clear error (the app's bad-answers test)", async () => {
    const { code, output } = await runAppTest(appDir, 'test/bad-answers.test.mjs');
    expect({ code, failures: output.split('\n').filter((line) => /^\s*not ok/.test(line)) }).toEqual({ code: 0, failures: [] });
    expect(output).toMatch(/# pass 4\b/);
  });
});

import { describe, expect, test } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { n8nApp, n8nPackageName, n8nTypeNames, n8nVersions, searchMethodName } from '../../src/export/n8n/exporter.js';
import { projectRoot } from '../../src/paths.js';
import { exporters, platformNames } from '../../src/export/platforms.js';
import { sharedFile } from '../../src/export/shared/shared-files.js';
import { defaultTolerance, signatureProblem } from '../../src/export/shared/template/standard-webhooks.js';
import { loadManifest } from '../../src/manifest/load.js';

// The n8n export (`npm run export -- n8n`): the community node package's files, names and
// package.json. Linting, building and scanning it with n8n's tools, and running it in a real
// n8n, is `npm run test:platforms -- n8n` (the package's own `npm test`).

const manifest = loadManifest();
const files = n8nApp(manifest, { baseUrl: 'https://connector.example.com/' });
const text = (path: string) => {
  const file = files.get(path);
  if (file === undefined) throw new Error(`no ${path}`);
  return file;
};

describe('n8n export', () => {
  test('is registered as a platform', () => {
    expect(platformNames).toContain('n8n');
    expect(exporters.n8n.title).toBe('n8n');
  });

  test('has the layout n8n-node creates', () => {
    for (const path of [
      'package.json',
      'tsconfig.json',
      'eslint.config.mjs',
      'README.md',
      '.gitignore',
      'credentials/SignageConnectorApi.credentials.ts',
      'nodes/SignageConnector/SignageConnector.node.ts',
      'nodes/SignageConnector/SignageConnector.node.json',
      'nodes/SignageConnectorTrigger/SignageConnectorTrigger.node.ts',
      'nodes/SignageConnectorPollTrigger/SignageConnectorPollTrigger.node.ts',
      'nodes/shared/connector.ts',
      'icons/signage.svg',
      'test/run.mjs',
      'test/n8n.test.mjs',
    ]) {
      expect(files.has(path)).toBe(true);
    }
    for (const [path, body] of files) expect({ path, placeholder: /\{\{[A-Z][A-Z0-9_]*\}\}/.exec(body)?.[0] }).toEqual({ path, placeholder: undefined });
  });

  test('the README names the n8n and Node.js versions its tests install, and installs into n8n as docs/n8n.md does', () => {
    const readme = text('README.md');
    expect(readme).toContain(`install n8n ${n8nVersions.n8n} with Node.js\n${n8nVersions.n8nNode} from the npm registry`);
    const installBlock = (markdown: string) => /## (?:4\. )?Install into self-hosted n8n\n[\s\S]*?```sh\n([\s\S]*?)```/.exec(markdown)?.[1];
    const docs = readFileSync(join(projectRoot, 'docs', 'n8n.md'), 'utf8');
    expect(installBlock(readme)).toBeDefined();
    expect(installBlock(readme)).toBe(installBlock(docs)!.replaceAll('0.1.0', manifest.version));
  });

  test('package.json is a community node package with no runtime dependency', () => {
    const pkg = JSON.parse(text('package.json'));
    expect(pkg.name).toBe(n8nPackageName);
    expect(pkg.version).toBe(manifest.version);
    expect(pkg.keywords).toContain('n8n-community-node-package');
    expect(pkg.dependencies).toBeUndefined();
    expect(pkg.peerDependencies).toEqual({ 'n8n-workflow': '*' });
    expect(pkg.files).toEqual(['dist']);
    expect(pkg.homepage).toBe('https://connector.example.com/docs');
    expect(pkg.author.email).toMatch(/@/);
    expect(pkg.scripts).toMatchObject({ build: 'n8n-node build', lint: 'n8n-node lint', test: 'node test/run.mjs' });
    expect(pkg.n8n).toEqual({
      n8nNodesApiVersion: 1,
      strict: true,
      credentials: ['dist/credentials/SignageConnectorApi.credentials.js'],
      nodes: [
        'dist/nodes/SignageConnector/SignageConnector.node.js',
        'dist/nodes/SignageConnectorTrigger/SignageConnectorTrigger.node.js',
        'dist/nodes/SignageConnectorPollTrigger/SignageConnectorPollTrigger.node.js',
      ],
    });
    expect(Object.keys(pkg.devDependencies)).toEqual(expect.arrayContaining(['@n8n/node-cli', '@n8n/scan-community-package', 'n8n-workflow']));
  });

  test('the type names and parameters are the fixed ones', () => {
    expect(n8nTypeNames).toEqual({
      credential: 'signageConnectorApi',
      node: 'signageConnector',
      trigger: 'signageConnectorTrigger',
      pollTrigger: 'signageConnectorPollTrigger',
    });
    const credential = text('credentials/SignageConnectorApi.credentials.ts');
    expect(credential).toContain("name = 'signageConnectorApi'");
    expect(credential).toMatch(/name: 'baseUrl'/);
    expect(credential).toMatch(/name: 'apiKey',\s+type: 'string',\s+typeOptions: \{ password: true \}/);
    expect(text('nodes/SignageConnector/SignageConnector.node.ts')).toContain("name: 'signageConnector'");
    expect(text('nodes/SignageConnectorTrigger/SignageConnectorTrigger.node.ts')).toContain("name: 'signageConnectorTrigger'");
    expect(text('nodes/SignageConnectorPollTrigger/SignageConnectorPollTrigger.node.ts')).toContain("name: 'signageConnectorPollTrigger'");
    expect(text('nodes/shared/operations.ts')).toContain("name: 'operation'");
    expect(text('nodes/shared/triggers.ts')).toContain("name: 'trigger'");
  });

  test('the generated description carries every operation, input, dropdown and trigger of the manifest', () => {
    const module = text('nodes/shared/connector.ts');
    const json = module.slice(module.indexOf('= {') + 2, module.lastIndexOf('}') + 1);
    const spec = JSON.parse(json);
    expect(spec.baseUrl).toBe('https://connector.example.com');
    expect(spec.operations.map((o: { id: string }) => o.id)).toEqual(manifest.operations.map((o) => o.id));
    for (const operation of manifest.operations) {
      const generated = spec.operations.find((o: { id: string }) => o.id === operation.id);
      expect(generated.inputs.map((i: { key: string }) => i.key)).toEqual(operation.inputs.map((i) => i.key));
      expect(generated.request.path).toBe(operation.request.path);
    }
    expect(spec.optionSources.map((s: { searchMethod: string }) => s.searchMethod)).toEqual(manifest.optionSources.map((s) => searchMethodName(s.id)));
    expect(searchMethodName('menu_groups')).toBe('searchMenuGroups');
    expect(spec.triggers.map((t: { id: string }) => t.id)).toEqual(manifest.triggers.map((t) => t.id));
    expect(spec.auth.test).toEqual({ method: 'GET', path: '/v1/me' });
  });

  test('a new operation in the manifest appears without code changes', () => {
    const extended = structuredClone(manifest);
    extended.operations.push({ ...structuredClone(manifest.operations[0]!), id: 'get_device_again', title: 'Find device again' });
    const module = n8nApp(extended, { baseUrl: 'http://localhost:3000' }).get('nodes/shared/connector.ts')!;
    expect(module).toContain('"id": "get_device_again"');
  });

  test('refuses a base URL that is not http(s)', () => {
    expect(() => n8nApp(manifest, { baseUrl: 'ftp://example.com' })).toThrow(/http/);
  });

  test('the signature check follows Standard Webhooks', () => {
    // The same computation as nodes/shared/signature.ts (the shared verification), against a known vector.
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = '{"test": 2432232314}';
    const signature = createHmac('sha256', Buffer.from(secret.slice(6), 'base64'))
      .update(`msg_p5jXN8AQM9LWM0D4loKWxJek.1614265330.${body}`)
      .digest('base64');
    expect(signature).toBe('g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
    expect(text('nodes/shared/signature.ts')).toBe(sharedFile('standard-webhooks.ts'));
    expect(text('nodes/shared/manifest.ts')).toBe(sharedFile('manifest.d.ts'));
    const headers = { 'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek', 'webhook-timestamp': '1614265330', 'webhook-signature': `v1,${signature}` };
    expect(signatureProblem(secret, headers, body, defaultTolerance, 1614265330 + 300)).toBeNull();
    expect(signatureProblem(secret, headers, body, defaultTolerance, 1614265330 + 301)).toMatch(/timestamp/);
  });
});

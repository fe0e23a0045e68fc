import { describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activepiecesApp, activepiecesNames, activepiecesVersions } from '../../src/export/activepieces/exporter.js';
import type { Definition } from '../../src/export/activepieces/template/src/lib/types.js';
import { sharedFile } from '../../src/export/shared/shared-files.js';
import { queuedTolerance, signatureProblem } from '../../src/export/shared/template/standard-webhooks.js';
import { loadManifest } from '../../src/manifest/load.js';
import type { Manifest } from '../../src/manifest/schema.js';
import { projectRoot } from '../../src/paths.js';
import { generateSecret, signedHeaders } from '../../src/webhooks/signing.js';
import { ensureBuild } from '../helpers/processes.js';

// The Activepieces export (`npm run export -- activepieces`): what is generated from the
// manifest and what is copied. The piece itself runs against a live connector in its own tests
// (`npm run test:platforms -- activepieces`), which install the Activepieces packages.

const manifest = loadManifest();
const baseUrl = 'https://connector.example.com';

/** The generated definition.ts as data. */
function definitionOf(files: Map<string, string>): Definition {
  const text = files.get('src/definition.ts')!;
  const json = text.slice(text.indexOf('= ') + 2).replace(/;\s*$/, '');
  return JSON.parse(json) as Definition;
}

describe('activepieces export', () => {
  const files = activepiecesApp(manifest, { baseUrl });
  const definition = definitionOf(files);

  test('writes the piece: its code and tests as they are, the definition, package.json and README', () => {
    expect([...files.keys()]).toEqual(
      expect.arrayContaining([
        '.gitignore',
        'README.md',
        'package.json',
        'tsconfig.json',
        'src/index.ts',
        'src/definition.ts',
        'src/lib/actions.ts',
        'src/lib/auth.ts',
        'src/lib/options.ts',
        'src/lib/triggers.ts',
        'src/lib/signature.ts',
        'src/lib/manifest.d.ts',
        'src/lib/shape.ts',
        'test/harness.ts',
        'test/bad-answers.test.ts',
        'test/auth.test.ts',
        'test/dropdowns.test.ts',
        'test/actions.test.ts',
        'test/triggers.test.ts',
      ]),
    );
    expect(files.get('src/lib/triggers.ts')).toBe(readFileSync(join(projectRoot, 'src/export/activepieces/template/src/lib/triggers.ts'), 'utf8'));
    expect(files.get('src/lib/signature.ts')).toBe(sharedFile('standard-webhooks.ts'));
    expect(files.get('src/lib/manifest.d.ts')).toBe(sharedFile('manifest.d.ts'));
    expect(files.get('src/index.ts')).toMatch(/export const signageConnector = createPiece\(/);
    expect(files.get('README.md')).not.toMatch(/\{\{[A-Z][A-Z0-9_]*\}\}/);
  });

  test('package.json: the pinned framework versions, strict type check and the tests in npm test', () => {
    const pkg = JSON.parse(files.get('package.json')!);
    expect(pkg.dependencies).toEqual({ '@activepieces/pieces-framework': '0.32.0', '@activepieces/pieces-common': '0.12.5' });
    expect(activepiecesVersions).toEqual({ framework: '0.32.0', common: '0.12.5' });
    expect(pkg.main).toBe('dist/src/index.js');
    expect(pkg.scripts.test).toMatch(/^tsc -p tsconfig\.json --strict && node --test /);
    expect(pkg.version).toBe(manifest.version);
    expect(JSON.parse(files.get('tsconfig.json')!).compilerOptions.strict).toBe(true);
  });

  test('names come from the manifest: actions by operation id, triggers by id and <id>_polling, props by input key', () => {
    expect(definition.operations.map((operation) => operation.id)).toEqual(manifest.operations.map((operation) => operation.id));
    expect(activepiecesNames(manifest).actions).toEqual(expect.arrayContaining(['get_device', 'list_devices', 'list_menus', 'list_groups', 'get_group']));
    expect(activepiecesNames(manifest).triggers).toEqual(['device_offline', 'device_offline_polling', 'device_online', 'device_online_polling']);
    for (const operation of manifest.operations) {
      expect(definition.operations.find((candidate) => candidate.id === operation.id)!.inputs.map((input) => input.key)).toEqual(
        operation.inputs.map((input) => input.key),
      );
    }
    const getGroup = definition.operations.find((operation) => operation.id === 'get_group')!;
    expect(getGroup.inputs.find((input) => input.key === 'group_id')).toMatchObject({ optionsFrom: 'menu_groups', optionParams: { menuId: 'menu_id' } });
    expect(definition.optionSources.map((source) => source.path)).toEqual(manifest.optionSources.map((source) => source.path));
    expect(definition.defaultBaseUrl).toBe(baseUrl);
    expect(definition.auth.test).toEqual({ method: 'GET', path: '/v1/me' });
    expect(files.get('src/lib/auth.ts')).toMatch(/base_url: Property\.ShortText[\s\S]*api_key: PieceAuth\.SecretText/);
  });

  test('a new option source, operation and trigger in the manifest appear without code changes', () => {
    const extended: Manifest = structuredClone(manifest);
    extended.optionSources.push({ ...structuredClone(manifest.optionSources[2]!), id: 'screens', path: '/v1/screens/options' });
    extended.operations.push({ ...structuredClone(manifest.operations[0]!), id: 'find_screen' });
    extended.triggers.push({ ...structuredClone(manifest.triggers[0]!), id: 'screen_offline' });
    const names = activepiecesNames(extended);
    expect(names.actions).toContain('find_screen');
    expect(names.triggers).toEqual(expect.arrayContaining(['screen_offline', 'screen_offline_polling']));
    const generated = definitionOf(activepiecesApp(extended, { baseUrl }));
    expect(generated.optionSources.map((source) => source.id)).toContain('screens');
    expect(generated.operations.map((operation) => operation.id)).toContain('find_screen');
  });

  test('refuses clashing names and a bad base URL', () => {
    const clashing: Manifest = structuredClone(manifest);
    clashing.operations.push({ ...structuredClone(manifest.operations[0]!), id: 'device_offline_polling' });
    expect(() => activepiecesApp(clashing, { baseUrl })).toThrow(/both be called device_offline_polling/);
    expect(() => activepiecesApp(manifest, { baseUrl: 'ftp://x' })).toThrow(/must be http/);
    expect(() => activepiecesApp(manifest, { baseUrl: 'https://x/?q=1' })).toThrow(/must not have a query/);
  });

  test("the piece's signature check (the shared one, with the tolerance of a queued delivery) accepts the connector's own signing and nothing else", () => {
    const secret = generateSecret();
    const body = JSON.stringify({ type: 'device.offline', timestamp: new Date().toISOString(), data: { id: 'evt_1' } });
    const now = Math.floor(Date.now() / 1000);
    const headers = signedHeaders(secret, 'msg_1', now, body) as unknown as Record<string, string>;
    expect(signatureProblem(secret, headers, body, queuedTolerance)).toBeNull();
    expect(signatureProblem(secret, headers, body.replace('evt_1', 'evt_2'), queuedTolerance)).toBe('the signature does not match');
    expect(signatureProblem(generateSecret(), headers, body, queuedTolerance)).toBe('the signature does not match');
    const at = (seconds: number) => signedHeaders(secret, 'msg_1', seconds, body) as unknown as Record<string, string>;
    expect(signatureProblem(secret, at(now - 1800), body, queuedTolerance)).toBeNull(); // queued in Activepieces for a while
    expect(signatureProblem(secret, at(now - 7200), body, queuedTolerance)).toMatch(/timestamp/);
    expect(signatureProblem(secret, at(now + 600), body, queuedTolerance)).toMatch(/timestamp/);
    expect(signatureProblem(secret, {}, body, queuedTolerance)).toMatch(/missing/);
  });

  test('npm run export -- activepieces writes the folder', async () => {
    await ensureBuild();
    const out = mkdtempSync(join(tmpdir(), 'connector-activepieces-export-'));
    try {
      const result = spawnSync(process.execPath, [join(projectRoot, 'dist', 'src', 'cli', 'export.js'), 'activepieces', '--out', out, '--base-url', baseUrl], {
        encoding: 'utf8',
      });
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout).toMatch(/Activepieces app/);
      expect(readFileSync(join(out, 'src', 'definition.ts'), 'utf8')).toBe(files.get('src/definition.ts'));
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 120_000);
});

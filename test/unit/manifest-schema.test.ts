import { describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestJsonSchemaText } from '../../src/manifest/json-schema.js';
import { connectorManifestPath, loadManifest, parseManifest } from '../../src/manifest/load.js';
import { projectRoot } from '../../src/paths.js';

test('manifests/connector.schema.json is exactly what the zod schema generates (run npm run manifest:schema after changing it)', () => {
  const onDisk = readFileSync(join(projectRoot, 'manifests', 'connector.schema.json'), 'utf8');
  expect(onDisk).toBe(manifestJsonSchemaText());
});

test('the shipped manifest validates and describes auth, three option sources, two triggers and rate limits', () => {
  const manifest = loadManifest(connectorManifestPath);
  expect(manifest.auth.test).toEqual({ method: 'GET', path: '/v1/me' });
  expect(manifest.optionSources.map((s) => s.id)).toEqual(['menus', 'menu_groups', 'devices']);
  expect(manifest.triggers.map((t) => [t.id, t.eventTypes, t.dedupeKey])).toEqual([
    ['device_offline', ['device.offline'], 'id'],
    ['device_online', ['device.online'], 'id'],
  ]);
  expect(manifest.rateLimits.failedAuthAttemptsPerMinute).toBe(20);
});

test('the shipped manifest declares the five read operations, each input filled from its dropdown', () => {
  const manifest = loadManifest(connectorManifestPath);
  expect(manifest.operations.map((o) => [o.id, o.request.path, o.request.auth])).toEqual([
    ['get_device', '/devices/{device_id}', 'bearer'],
    ['list_devices', '/devices', 'bearer'],
    ['list_menus', '/v1/menus', 'api_key'],
    ['list_groups', '/v1/groups', 'api_key'],
    ['get_group', '/v1/groups', 'api_key'],
  ]);
  const groupId = manifest.operations.find((o) => o.id === 'get_group')!.inputs.find((i) => i.key === 'group_id')!;
  expect(groupId).toMatchObject({ optionsFrom: 'menu_groups', optionParams: { menuId: 'menu_id' }, param: 'groups', required: true });
  expect(manifest.operations.find((o) => o.id === 'list_devices')!.paging).toMatchObject({ limitInput: 'limit', maxSize: 1000 });
});

describe('an operation that does not add up is refused with its JSON path', () => {
  // The cases below edit the shipped manifest's JSON at will: any is the honest type here.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const shipped = () => JSON.parse(readFileSync(connectorManifestPath, 'utf8')) as { operations: Array<Record<string, any>> };
  test.each([
    ['a path parameter without its input', (d: ReturnType<typeof shipped>) => (d.operations[0]!.inputs = []), /operations\[0\]\.request\.path.*\{device_id\}/],
    ['an unknown option source', (d: ReturnType<typeof shipped>) => (d.operations[0]!.inputs[0].optionsFrom = 'screens'), /unknown option source "screens"/],
    [
      'a dependent dropdown whose parameter is not filled',
      (d: ReturnType<typeof shipped>) => (d.operations[4]!.inputs[1].optionParams = {}),
      /must say which input fills menuId/,
    ],
    [
      'a parameter filled from an input that does not exist',
      (d: ReturnType<typeof shipped>) => (d.operations[4]!.inputs[1].optionParams = { menuId: 'menu' }),
      /unknown input "menu"/,
    ],
    ['a paging limit without its input', (d: ReturnType<typeof shipped>) => (d.operations[1]!.paging.limitInput = 'max'), /needs an input "max"/],
    ['two operations with one id', (d: ReturnType<typeof shipped>) => (d.operations[1]!.id = 'get_device'), /duplicate id get_device/],
  ])('%s', (_name, change, message) => {
    const document = shipped();
    change(document);
    expect(() => parseManifest(document, 'm.json')).toThrow(message);
  });
});

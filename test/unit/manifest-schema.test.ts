import { expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { manifestJsonSchemaText } from '../../src/manifest/json-schema.js';
import { connectorManifestPath, loadManifest } from '../../src/manifest/load.js';
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

import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join } from 'node:path';
import request from 'supertest';
import { readDatasetFile } from '../../src/dataset/import.js';
import { demoDatasetPath, projectRoot } from '../../src/paths.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * The README's endpoint table and the OpenAPI document name the same endpoints, both ways: a
 * route added to the service and its document shows up in the README, and the README never
 * lists one the service does not have.
 */

const methods = ['get', 'post', 'put', 'patch', 'delete'];

/** `GET /v1/hooks/{id}` for every operation under `paths`. */
async function documented(t: TestApp): Promise<string[]> {
  const doc = (await request(t.app).get('/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
  return Object.entries(doc.paths).flatMap(([path, item]) => methods.filter((m) => m in item).map((m) => `${m.toUpperCase()} ${path}`));
}

/** Every `METHOD /path` in backticks in the first column of the README's endpoint table. */
function inReadme(): string[] {
  const lines = readFileSync(join(projectRoot, 'README.md'), 'utf8').split('\n');
  const start = lines.findIndex((line) => line.startsWith('| method and path |'));
  expect(start).toBeGreaterThan(0);
  const rows = lines.slice(start + 2);
  const table = rows.slice(
    0,
    rows.findIndex((line) => !line.startsWith('|')),
  );
  return table.flatMap((line) => [...line.split('|')[1]!.matchAll(/`([A-Z]+ \/[^`]*)`/g)].map((m) => m[1]!));
}

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => {
  await t.close();
});

test('every documented endpoint is in the README table', async () => {
  const readme = new Set(inReadme());
  expect((await documented(t)).filter((endpoint) => !readme.has(endpoint))).toEqual([]);
});

test('every endpoint in the README table is in the OpenAPI document', async () => {
  const doc = new Set(await documented(t));
  expect(inReadme().filter((endpoint) => !doc.has(endpoint))).toEqual([]);
});

test("the README's POST /v1/hooks example works offline, against the connector started as the README says", async () => {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
  const key = /^K=(\S+)/m.exec(readme)?.[1];
  const env = /^#\s+(WEBHOOK_ALLOWED_TARGETS=\S+) npm start$/m.exec(readme)?.[1];
  const body = /-d '(\{"target_url"[^']*\})' \$B\/v1\/hooks/.exec(readme)?.[1];
  expect({ key, env, body }).toEqual({ key: expect.any(String), env: expect.any(String), body: expect.any(String) });
  const target = new URL((JSON.parse(body!) as { target_url: string }).target_url);
  // An IP literal: the connector checks it without a DNS look-up.
  expect(isIP(target.hostname)).toBe(4);
  const [name, value] = env!.split('=') as [string, string];
  const started = await buildTestApp({ dataset: readDatasetFile(demoDatasetPath), env: { [name]: value } });
  try {
    const res = await request(started.app).post('/v1/hooks').set('X-API-Key', key!).set('Content-Type', 'application/json').send(body!);
    expect([res.status, res.body.target_url]).toEqual([201, target.href]);
  } finally {
    await started.close();
  }
});

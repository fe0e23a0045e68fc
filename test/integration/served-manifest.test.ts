import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog } from '../fixtures/catalog.js';

// docs/service.md: GET /v1/manifest serves the connector manifest with its base URL filled in.
// A platform or integrator that follows its `$schema` must find the schema on this service,
// and the manifest must validate against it with a strict validator.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let t: TestApp;
let server: Server;
let base: string;

beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog() });
  server = t.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
});

async function getJson(url: string): Promise<{ status: number; type: string; body: Json }> {
  const res = await fetch(url);
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: (await res.json()) as Json };
}

describe('GET /v1/manifest and the schema it links', () => {
  test('the manifest validates, in Ajv strict mode, against the schema fetched from its own $schema URL', async () => {
    const manifest = await getJson(`${base}/v1/manifest`);
    expect(manifest.status).toBe(200);
    expect(manifest.body.$schema).toBe(`${base}/v1/manifest/schema`);
    expect(manifest.body.baseUrl).toBe(base);

    const schema = await getJson(manifest.body.$schema as string);
    expect(schema.status).toBe(200);
    expect(schema.type).toMatch(/^application\/schema\+json/);
    expect(schema.body.$id).toBe(manifest.body.$schema);

    // Strict, and nothing relaxed: no allowUnionTypes, no unknown formats or keywords.
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    const validate = ajv.compile(schema.body);
    expect([validate(manifest.body), ajv.errorsText(validate.errors)]).toEqual([true, 'No errors']);
  });

  test('the schema still forbids what is not declared: an extra field is refused', async () => {
    const manifest = (await getJson(`${base}/v1/manifest`)).body;
    const schema = (await getJson(manifest.$schema as string)).body;
    const validate = new Ajv2020({ strict: true }).compile(schema);
    expect(validate({ ...manifest, url: `${base}/v1/me` })).toBe(false);
    expect(validate({ ...manifest, baseUrl: 'not a url' })).toBe(false);
    const [first, ...rest] = manifest.optionSources as Json[];
    expect(validate({ ...manifest, optionSources: [{ ...first, url: `${base}${first!.path}` }, ...rest] })).toBe(false);
  });

  test('every declared path resolves against baseUrl on this service', async () => {
    const manifest = (await getJson(`${base}/v1/manifest`)).body;
    const test = manifest.auth.test as Json;
    const res = await fetch(`${manifest.baseUrl}${test.path}`, { headers: { 'X-API-Key': 'sk_test_ana_all_scopes_000000000' } });
    expect(res.status).toBe(200);
  });

  test('with PUBLIC_URL, both URLs use it (path prefix included)', async () => {
    const pub = await buildTestApp({ env: { PUBLIC_URL: 'https://signage.example.com/connector/' } });
    const listening = pub.app.listen(0, '127.0.0.1');
    try {
      await new Promise<void>((resolve) => listening.once('listening', () => resolve()));
      const local = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
      const manifest = (await getJson(`${local}/v1/manifest`)).body;
      expect(manifest.baseUrl).toBe('https://signage.example.com/connector');
      expect(manifest.$schema).toBe('https://signage.example.com/connector/v1/manifest/schema');
      expect((await getJson(`${local}/v1/manifest/schema`)).body.$id).toBe(manifest.$schema);
    } finally {
      await new Promise<void>((resolve) => listening.close(() => resolve()));
      await pub.close();
    }
  });
});

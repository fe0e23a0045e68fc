import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Express } from 'express';
import request from 'supertest';
import type { Response } from 'supertest';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { Receiver } from '../helpers/receiver.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { catalog, groupIds, keys, menuIds } from '../fixtures/catalog.js';
import { routes as declaredRoutes } from '../../src/http/routes/index.js';

// GET /openapi.json and GET /docs. The document and the Express routes are both built from the
// route declarations (src/http/routes/); here the document is checked against the routes
// Express really has and the keys they really take, for OpenAPI 3.1 structure, and against
// real responses from every part of the API.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Method = 'get' | 'post' | 'patch' | 'delete';
const adminToken = 'openapi-test-admin-token-0123456789abcdef';

const timeoutMs = 300_000;
const dev01 = 'a4:83:e7:1f:2b:01';

// ---- Routes Express has registered ----

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  slash?: boolean;
}

/** Every route of the app as `METHOD /openapi/{path}`, walking the routers it mounts. */
function registeredRoutes(app: Express): string[] {
  const out: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods)) {
          if (method === '_all') throw new Error(`${layer.route.path}: router.all() cannot be documented per method`);
          out.push(`${method.toUpperCase()} ${layer.route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
        }
      } else if (layer.handle?.stack) {
        // Routers are mounted at the root; one mounted under a prefix would need its path here.
        if (!layer.slash) throw new Error('a router is mounted under a path prefix: teach registeredRoutes its prefix');
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return [...new Set(out)].sort();
}

function documentedRoutes(doc: Json): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const method of Object.keys(item)) {
      if (['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'].includes(method)) out.push(`${method.toUpperCase()} ${path}`);
    }
  }
  return out.sort();
}

// ---- JSON Schema validation of the document's schemas ----

const componentBase = 'https://openapi.test/components/schemas/';

/** `#/components/schemas/X` → an absolute id Ajv knows (components are added one by one). */
function absoluteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(absoluteRefs);
  if (value === null || typeof value !== 'object') return value;
  const out: Json = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] =
      key === '$ref' && typeof inner === 'string' && inner.startsWith('#/components/schemas/')
        ? componentBase + inner.slice('#/components/schemas/'.length)
        : absoluteRefs(inner);
  }
  return out;
}

function makeAjv(doc: Json): { ajv: Ajv2020; compile(schema: Json): ValidateFunction } {
  const ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  ajv.addFormat('date-time', /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/);
  ajv.addFormat('uri', (text: string) => URL.canParse(text));
  for (const [name, schema] of Object.entries(doc.components.schemas as Json)) {
    ajv.addSchema(absoluteRefs(schema) as Json, componentBase + name);
  }
  const cache = new Map<string, ValidateFunction>();
  return {
    ajv,
    compile(schema: Json) {
      const key = JSON.stringify(schema);
      let validate = cache.get(key);
      if (!validate) {
        validate = ajv.compile(absoluteRefs(schema) as Json);
        cache.set(key, validate);
      }
      return validate;
    },
  };
}

/** Resolves a local JSON pointer (`#/a/b`) in the document. */
function resolvePointer(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  return ref
    .slice(2)
    .split('/')
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((node, part) => (node !== null && typeof node === 'object' ? (node as Json)[part] : undefined), doc);
}

function collectRefs(value: unknown, out: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => collectRefs(v, out));
  else if (value !== null && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') out.push(inner);
      else collectRefs(inner, out);
    }
  }
  return out;
}

/** Every operation of the document (paths and webhooks) with where it is. */
function operationsOf(doc: Json): Array<{ where: string; path: string; op: Json }> {
  const out: Array<{ where: string; path: string; op: Json }> = [];
  for (const [section, items] of [
    ['paths', doc.paths],
    ['webhooks', doc.webhooks ?? {}],
  ] as const) {
    for (const [path, item] of Object.entries(items as Json)) {
      for (const [method, op] of Object.entries(item as Json)) out.push({ where: `${section} ${method.toUpperCase()} ${path}`, path, op: op as Json });
    }
  }
  return out;
}

// ---- The app under test ----

let t: TestApp;
let doc: Json;
let schemas: ReturnType<typeof makeAjv>;
let receiver: Receiver;

beforeAll(async () => {
  // The clock starts 5 minutes before real time so delivery timestamps are current.
  t = await buildTestApp({
    dataset: catalog(),
    clock: new ManualClock(Date.now() - timeoutMs),
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ADMIN_TOKEN: adminToken },
  });
  doc = (
    await request(t.app)
      .get('/openapi.json')
      .expect(200)
      .expect('Content-Type', /^application\/json/)
  ).body as Json;
  schemas = makeAjv(doc);
  receiver = await new Receiver().start();
});

afterAll(async () => {
  await receiver.stop();
  await t.close();
});

describe('GET /openapi.json: every route, documented', () => {
  test('every route Express has registered is in the document with its method, and nothing else is', () => {
    const routes = registeredRoutes(t.app);
    expect(routes.length).toBeGreaterThan(15);
    expect(documentedRoutes(doc)).toEqual(routes);
  });

  test('Express routes and the document are built from the same declarations', () => {
    const declared = declaredRoutes(t.services.manifest, t.services.targets);
    const names = declared.map((route) => `${route.method.toUpperCase()} ${route.path}`).sort();
    expect(registeredRoutes(t.app)).toEqual(names);
    expect(documentedRoutes(doc)).toEqual(names);
    const schemes = { bearer: ['BearerAuth'], 'x-api-key': ['ApiKeyHeader'], either: ['ApiKeyHeader', 'BearerAuth'] };
    for (const { method, path, operationId, auth, admin } of declared) {
      const op = doc.paths[path][method] as Json;
      expect([path, op.operationId]).toEqual([path, operationId]);
      const expected = admin ? [{ AdminToken: [] }] : auth ? schemes[auth.headers].map((scheme) => ({ [scheme]: auth.scopes })) : [];
      expect([path, op.security]).toEqual([path, expected]);
    }
  });

  test('every route takes the key its declaration (and so its operation) names, and no other', async () => {
    const bearer = { ana: { Authorization: `Bearer ${keys.ana}` }, none: { Authorization: `Bearer ${keys.anaNoScopes}` } };
    const apiKey = { ana: { 'X-API-Key': keys.ana }, none: { 'X-API-Key': keys.anaNoScopes } };
    let checkedAdminRefusal = false;
    for (const route of declaredRoutes(t.services.manifest, t.services.targets)) {
      const call = async (headers: Record<string, string>) =>
        (
          await request(t.app)
            [route.method](route.path.replace(/\{[^}]+\}/g, 'x'))
            .set(headers)
        ).status;
      const where = `${route.method.toUpperCase()} ${route.path}`;
      const schemes = (doc.paths[route.path][route.method].security as Json[]).map((requirement) => Object.keys(requirement)[0]);
      if (route.admin) {
        // The operator's token, and no key, opens it (a key as the token once: failures count
        // against the client, so not for every route).
        if (!checkedAdminRefusal) expect([where, await call(bearer.ana), await call(apiKey.ana)]).toEqual([where, 401, 401]);
        checkedAdminRefusal = true;
        expect([where, await call({ Authorization: `Bearer ${adminToken}` })]).not.toEqual([where, 401]);
        continue;
      }
      if (!route.auth) {
        expect([where, await call({})]).not.toEqual([where, 401]);
        continue;
      }
      expect([where, await call({})]).toEqual([where, 401]);
      for (const [scheme, headers] of [
        ['ApiKeyHeader', apiKey],
        ['BearerAuth', bearer],
      ] as const) {
        const read = schemes.includes(scheme);
        const withAllScopes = await call(headers.ana);
        expect([where, scheme, read ? withAllScopes !== 401 && withAllScopes !== 403 : withAllScopes === 401]).toEqual([where, scheme, true]);
        if (read) expect([where, scheme, await call(headers.none)]).toEqual([where, scheme, route.auth.scopes.length > 0 ? 403 : 200]);
      }
    }
  });

  test('the check catches a route added without documentation', async () => {
    const extra = await buildTestApp();
    try {
      extra.app.get('/v1/undocumented/:thing', (_req, res) => {
        res.json({});
      });
      const missing = registeredRoutes(extra.app).filter((route) => !documentedRoutes(doc).includes(route));
      expect(missing).toEqual(['GET /v1/undocumented/{thing}']);
    } finally {
      await extra.close();
    }
  });

  test('option routes come from the manifest: one GET per option source', () => {
    for (const source of t.services.manifest.optionSources) {
      expect(doc.paths[source.path]?.get?.operationId).toEqual(expect.stringMatching(/Options$/));
    }
  });

  test('no key is needed; servers come from the request, or PUBLIC_URL', async () => {
    const server = t.app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    try {
      const { port } = server.address() as { port: number };
      const res = await request(`http://127.0.0.1:${port}`).get('/openapi.json').expect(200);
      expect(res.body.servers).toEqual([{ url: `http://127.0.0.1:${port}` }]);
    } finally {
      server.close();
    }
    const pub = await buildTestApp({ env: { PUBLIC_URL: 'https://signage.example.com/connector/' } });
    try {
      const res = await request(pub.app).get('/openapi.json').expect(200);
      expect(res.body.servers).toEqual([{ url: 'https://signage.example.com/connector' }]);
      const page = await request(pub.app).get('/docs').expect(200);
      expect(page.text).toContain('src="/connector/docs/assets/swagger-ui-bundle.js"');
      expect(page.text).toContain('"url":"/connector/openapi.json"');
    } finally {
      await pub.close();
    }
  });

  test('info comes from the manifest; security schemes and per-operation security as in the contract', () => {
    expect(doc.info).toMatchObject({ title: t.services.manifest.name, version: t.services.manifest.version });
    expect(doc.components.securitySchemes).toEqual({
      ApiKeyHeader: expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }),
      BearerAuth: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
      AdminToken: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    const schemesOf = (method: Method, path: string) => (doc.paths[path][method].security as Json[]).map((r) => Object.keys(r)[0]);
    expect(schemesOf('get', '/devices')).toEqual(['BearerAuth']);
    expect(schemesOf('get', '/devices/{id}')).toEqual(['BearerAuth']);
    expect(schemesOf('get', '/v1/menus')).toEqual(['ApiKeyHeader']);
    expect(schemesOf('get', '/v1/groups')).toEqual(['ApiKeyHeader']);
    expect(schemesOf('get', '/v1/menus/options')).toEqual(['ApiKeyHeader']);
    expect(schemesOf('get', '/v1/menus/{menuId}/groups/options')).toEqual(['ApiKeyHeader']);
    for (const path of ['/v1/devices/options', '/v1/me', '/v1/triggers/device-status', '/v1/events', '/v1/hooks']) {
      expect(schemesOf('get', path)).toEqual(['ApiKeyHeader', 'BearerAuth']);
    }
    expect(doc.paths['/devices'].get.security).toEqual([{ BearerAuth: ['device:read'] }]);
    expect(doc.paths['/v1/hooks'].post.security[0]).toEqual({ ApiKeyHeader: ['hooks:write', 'device:read'] });
    for (const path of ['/healthz', '/readyz', '/v1/manifest', '/openapi.json', '/docs', '/metrics']) expect(doc.paths[path].get.security).toEqual([]);
  });

  test('query parameters are derived from the validation schemas', () => {
    const params = (path: string): Json => Object.fromEntries((doc.paths[path].get.parameters as Json[]).map((p) => [`${p.in}:${p.name}`, p]));
    const devices = params('/devices');
    expect(devices['query:page_size']).toMatchObject({ required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } });
    expect(devices['query:page']).toMatchObject({ schema: { type: 'integer', minimum: 1, default: 1 } });
    expect(devices['query:is_online']).toMatchObject({ schema: { type: 'boolean' } });
    expect(devices['query:ids']).toMatchObject({ style: 'form', explode: false, schema: { type: 'array', maxItems: 1000 } });
    expect(params('/devices/{id}')['path:id']).toMatchObject({ required: true, schema: { type: 'string' } });
    const groups = params('/v1/menus/{menuId}/groups/options');
    expect(groups['query:format'].schema.enum).toEqual(['tuples', 'objects', 'n8n', 'tree']);
    expect(params('/v1/menus/options')['query:format'].schema.enum).toEqual(['tuples', 'objects', 'n8n']);
    expect(params('/v1/menus/options')['query:parent']).toBeUndefined();
    expect(groups['path:menuId']).toMatchObject({ required: true, schema: { minLength: 1, maxLength: 200 } });
    expect(params('/v1/triggers/device-status')['query:type'].schema.items.enum).toEqual(['device.offline', 'device.online']);
    expect(params('/v1/events')['query:limit'].schema).toMatchObject({ minimum: 1, maximum: 500, default: 100 });
    expect(doc.paths['/v1/hooks'].post.requestBody.content['application/json'].schema).toMatchObject({
      type: 'object',
      required: ['target_url'],
      properties: { target_url: { type: 'string', maxLength: 2048 } },
    });
  });
});

describe('GET /openapi.json: OpenAPI 3.1 structure', () => {
  test('top level', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(typeof doc.info.title).toBe('string');
    expect(typeof doc.info.version).toBe('string');
    expect(doc.servers).toEqual([{ url: expect.stringMatching(/^https?:\/\//) }]);
    expect(Object.keys(doc.paths).every((path) => path.startsWith('/'))).toBe(true);
    const allowed = ['openapi', 'info', 'jsonSchemaDialect', 'servers', 'paths', 'webhooks', 'components', 'security', 'tags', 'externalDocs'];
    expect(Object.keys(doc).filter((key) => !allowed.includes(key) && !key.startsWith('x-'))).toEqual([]);
  });

  test('every $ref resolves inside the document', () => {
    const refs = [...new Set(collectRefs(doc))];
    expect(refs.length).toBeGreaterThan(10);
    expect(refs.filter((ref) => resolvePointer(doc, ref) === undefined)).toEqual([]);
  });

  test('operations: unique ids, declared tags, known security schemes, described responses', () => {
    const ids = new Set<string>();
    const tags = new Set((doc.tags as Json[]).map((tag) => tag.name));
    for (const { where, op } of operationsOf(doc)) {
      if (where.startsWith('paths')) {
        expect([where, typeof op.operationId]).toEqual([where, 'string']);
        expect(ids.has(op.operationId)).toBe(false);
        ids.add(op.operationId);
        for (const tag of op.tags) expect([where, tags.has(tag)]).toEqual([where, true]);
        for (const requirement of op.security as Json[]) {
          for (const scheme of Object.keys(requirement)) expect([where, scheme in doc.components.securitySchemes]).toEqual([where, true]);
        }
      }
      expect(Object.keys(op.responses).length).toBeGreaterThan(0);
      for (const [status, response] of Object.entries(op.responses as Json)) {
        expect([where, status]).toEqual([where, expect.stringMatching(/^([1-5](\d\d|XX)|default)$/)]);
        const resolved = (response.$ref ? resolvePointer(doc, response.$ref) : response) as Json;
        expect([where, status, typeof resolved.description]).toEqual([where, status, 'string']);
      }
    }
    expect(ids.size).toBe(documentedRoutes(doc).length);
  });

  test('parameters: valid locations, no duplicates, path templates and path parameters agree', () => {
    for (const { where, path, op } of operationsOf(doc)) {
      const params = (op.parameters ?? []) as Json[];
      const seen = new Set<string>();
      for (const p of params) {
        expect([where, p.name, ['query', 'header', 'path', 'cookie'].includes(p.in), typeof p.schema]).toEqual([where, p.name, true, 'object']);
        expect(seen.has(`${p.in}:${p.name}`)).toBe(false);
        seen.add(`${p.in}:${p.name}`);
        if (p.in === 'path') expect([where, p.name, p.required]).toEqual([where, p.name, true]);
      }
      if (where.startsWith('paths')) {
        const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
        expect([
          where,
          params
            .filter((p) => p.in === 'path')
            .map((p) => p.name)
            .sort(),
        ]).toEqual([where, templated]);
      }
    }
  });

  test('every schema compiles as JSON Schema 2020-12 (Ajv, strict): components, parameters, bodies, responses', () => {
    let compiled = Object.keys(doc.components.schemas).length;
    for (const name of Object.keys(doc.components.schemas)) expect(schemas.ajv.getSchema(componentBase + name)).toBeDefined();
    for (const { where, op } of operationsOf(doc)) {
      const found: Json[] = [];
      for (const p of (op.parameters ?? []) as Json[]) found.push(p.schema);
      for (const media of Object.values((op.requestBody?.content ?? {}) as Json)) found.push(media.schema);
      for (const response of Object.values(op.responses as Json)) {
        for (const media of Object.values(((response as Json).content ?? {}) as Json)) found.push(media.schema);
      }
      for (const schema of found) {
        expect(() => schemas.compile(schema)).not.toThrow();
        compiled += 1;
      }
      expect([where, found.length]).toEqual([where, expect.any(Number)]);
    }
    expect(compiled).toBeGreaterThan(60);
  });
});

// ---- Real responses against the document ----

/** Which operations a validated 2xx/3xx response has exercised. */
const exercised = new Set<string>();

/** The documented path template that serves `path` (static segments win). */
function templateOf(path: string): string {
  const segments = path.split('/');
  const matches = (template: string) => {
    const parts = template.split('/');
    return parts.length === segments.length && parts.every((part, i) => (part.startsWith('{') ? segments[i] !== '' : part === segments[i]));
  };
  const params = (template: string) => template.split('{').length;
  const candidates = Object.keys(doc.paths)
    .filter(matches)
    .sort((a, b) => params(a) - params(b));
  if (!candidates[0]) throw new Error(`${path} matches no documented path`);
  return candidates[0];
}

/** Checks a real response against the document: status documented, content type, body schema. */
function expectDocumented(method: Method, url: string, res: Response): Response {
  const path = new URL(url, 'http://x').pathname;
  const template = templateOf(path);
  const op = doc.paths[template][method] as Json | undefined;
  if (!op) throw new Error(`${method.toUpperCase()} ${template} is not documented`);
  const where = `${method.toUpperCase()} ${url} → ${res.status}`;
  let response = (op.responses[String(res.status)] ?? op.responses[`${String(res.status)[0]}XX`]) as Json | undefined;
  if (!response) throw new Error(`${where}: status not documented for ${template}`);
  if (response.$ref) response = resolvePointer(doc, response.$ref) as Json;
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
  if (!response.content) {
    expect([where, res.text ?? '']).toEqual([where, '']);
  } else {
    const type = String(res.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const media = response.content[type] as Json | undefined;
    if (!media) throw new Error(`${where}: content type ${type} not documented (${Object.keys(response.content).join(', ')})`);
    if (type === 'application/json') {
      const validate = schemas.compile(media.schema);
      if (!validate(res.body))
        throw new Error(
          `${where}: body does not match the documented schema: ${schemas.ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body).slice(0, 500)}`,
        );
    }
  }
  for (const name of Object.keys(response.headers ?? {})) {
    if (['X-Request-Id', 'ETag', 'Cache-Control', 'X-Total-Count', 'X-Cache', 'WWW-Authenticate'].includes(name)) {
      expect([where, name, res.headers[name.toLowerCase()] !== undefined]).toEqual([where, name, true]);
    }
  }
  if (res.status < 400) exercised.add(`${method.toUpperCase()} ${template}`);
  return res;
}

type Auth = 'apikey' | 'bearer' | 'admin' | 'none';

async function call(
  method: Method,
  url: string,
  options: { key?: string; auth?: Auth; body?: unknown; headers?: Record<string, string>; app?: Express } = {},
): Promise<Response> {
  const app = options.app ?? t.app;
  let req = request(app)[method](url);
  const key = options.key ?? keys.ana;
  const auth = options.auth ?? (url.startsWith('/devices') ? 'bearer' : 'apikey');
  if (auth === 'apikey') req = req.set('X-API-Key', key);
  if (auth === 'bearer') req = req.set('Authorization', `Bearer ${key}`);
  if (auth === 'admin') req = req.set('Authorization', `Bearer ${adminToken}`);
  for (const [name, value] of Object.entries(options.headers ?? {})) req = req.set(name, value);
  if (options.body !== undefined) req = req.send(options.body as object);
  return expectDocumented(method, url, await req);
}

describe('real responses match the documented schemas', () => {
  test('devices: list, filtered, past the end, one', async () => {
    expect((await call('get', '/devices')).body.data.length).toBeGreaterThan(0);
    await call('get', '/devices?is_online=false&page_size=2&ids=a4:83:e7:1f:2b:02,A4:83:E7:1F:2B:03');
    expect((await call('get', '/devices?page=99')).body).toEqual({ total: 4, data: [] });
    expect((await call('get', '/devices/A4:83:E7:1F:2B:01')).body.id).toBe(dev01);
    const never = await call('get', '/devices/a4:83:e7:1f:2b:03');
    expect(never.body.last_heartbeat_at).toBeNull();
  });

  test('menus and groups, nested groups and items', async () => {
    expect((await call('get', '/v1/menus')).body.menus.length).toBeGreaterThan(0);
    await call('get', '/v1/groups');
    await call('get', `/v1/groups?menus=${menuIds.allDay}`);
    const hot = await call('get', `/v1/groups?groups=${groupIds.hot}`);
    expect(hot.body.groups[0].items[0].items.length).toBeGreaterThan(0);
    await call('get', '/v1/groups?tags=temperature:*&tags=daypart:breakfast');
  });

  test('every option source in every format it offers, paged, 304, and 404', async () => {
    for (const source of t.services.manifest.optionSources) {
      const path = source.path.replace('{menuId}', menuIds.allDay);
      const formats = doc.paths[source.path].get.parameters.find((p: Json) => p.name === 'format').schema.enum as string[];
      for (const format of formats) {
        const res = await call('get', `${path}?format=${format}`);
        expect(JSON.stringify(res.body).length).toBeGreaterThan(2);
        await call('get', `${path}?format=${format}&limit=1`);
      }
      const first = await call('get', `${path}?format=n8n&limit=1`);
      expect(first.body.paginationToken).toEqual(expect.any(String));
      await call('get', `${path}?format=n8n&limit=1&cursor=${encodeURIComponent(first.body.paginationToken)}`);
      const plain = await call('get', path);
      await call('get', path, { headers: { 'If-None-Match': plain.headers.etag! } }).then((res) => expect(res.status).toBe(304));
    }
    await call('get', `/v1/menus/${menuIds.allDay}/groups/options?format=tree&parent=${groupIds.drinks}`);
    const missing = await call('get', '/v1/menus/00000000-0000-4000-8000-000000000000/groups/options');
    expect(missing.body).toEqual({ message: 'Menu not found' });
  });

  test('me', async () => {
    expect((await call('get', '/v1/me')).body.account).toEqual({ id: 'acc_harbor', name: 'Harbor Street Diner' });
    await call('get', '/v1/me', { auth: 'bearer' });
  });

  test('triggers, samples and the event log, with real events', async () => {
    expect((await call('get', '/v1/triggers/device-status')).body).toEqual([]);
    t.clock.advance(timeoutMs);
    expect((await pollDue(t)).events).toBe(1);
    const events = (await call('get', '/v1/triggers/device-status?type=device.offline&limit=5', { auth: 'bearer' })).body;
    expect(events).toHaveLength(1);
    await call('get', `/v1/triggers/device-status?devices=${dev01.toUpperCase()}`);
    expect((await call('get', '/v1/triggers/device-status/sample')).body.length).toBeGreaterThan(0);
    expect((await call('get', '/v1/events')).body).toHaveLength(1);
    await call('get', `/v1/events?after=${events[0].id}&limit=10`);
    expect((await call('get', '/v1/events/summary?interval=hour')).body.totals).toEqual({ 'device.offline': 1, 'device.online': 0 });
    await call('get', '/v1/events/summary?interval=day&type=device.online', { auth: 'bearer' });
  });

  test('webhooks: create, again, list, get, deliveries, delete', async () => {
    const created = await call('post', '/v1/hooks', { body: { target_url: receiver.url, events: ['device.online'], device_ids: [dev01] } });
    expect(created.status).toBe(201);
    expect((await call('post', '/v1/hooks', { body: { target_url: receiver.url, events: ['device.online'], device_ids: [dev01] } })).status).toBe(200);
    const other = await call('post', '/v1/hooks', { body: { target_url: receiver.url }, auth: 'bearer' });
    expect(other.status).toBe(201);
    expect((await call('get', '/v1/hooks')).body).toHaveLength(2);
    await call('get', `/v1/hooks/${created.body.id}`);
    // Device 01 comes back: one delivery to each hook.
    await t.all('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?', new Date(t.clock.now()).toISOString().replace('Z', '000Z'), dev01);
    expect((await pollDue(t)).events).toBe(1);
    await t.services.deliverer.drain();
    expect(receiver.received.length).toBeGreaterThan(0);
    const delivered = JSON.parse(receiver.received[0]!.body) as unknown;
    const deliverySchema = doc.webhooks.deviceStatus.post.requestBody.content['application/json'].schema as Json;
    const validate = schemas.compile(deliverySchema);
    expect([validate(delivered), schemas.ajv.errorsText(validate.errors)]).toEqual([true, 'No errors']);
    const attempts = await call('get', `/v1/hooks/${created.body.id}/deliveries`);
    expect(attempts.body.length).toBeGreaterThan(0);
    const hookPath = `/v1/hooks/${created.body.id}`;
    await call('get', `${hookPath}/deliveries/${attempts.body[0].delivery_id}`);
    expect((await call('post', `${hookPath}/deliveries/${attempts.body[0].delivery_id}/resend`)).status).toBe(202);
    expect((await call('post', `${hookPath}/test`)).body.delivered).toBe(true);
    expect((await call('post', `${hookPath}/secret/rotate`)).body.secret).toMatch(/^whsec_/);
    expect((await call('post', `${hookPath}/recover`, { body: { since: '2020-01-01T00:00:00Z', dry_run: true } })).status).toBe(200);
    expect((await call('post', `${hookPath}/recover`, { body: { since: '2020-01-01T00:00:00Z' } })).status).toBe(202);
    await t.services.hookOps.settled();
    expect((await call('patch', hookPath, { body: { enabled: false } })).body.status).toBe('disabled');
    expect((await call('delete', `/v1/hooks/${other.body.id}`)).status).toBe(204);
  });

  test('service endpoints: healthz, readyz, manifest, openapi.json, docs', async () => {
    await call('get', '/healthz', { auth: 'none' });
    await call('get', '/readyz', { auth: 'none' });
    const manifest = (await call('get', '/v1/manifest', { auth: 'none' })).body;
    expect(manifest.baseUrl).toEqual(expect.stringMatching(/^http:\/\//));
    // supertest listens anew for each request, so only the path of `$id` can match.
    expect((await call('get', new URL(manifest.$schema).pathname, { auth: 'none' })).body.$id).toMatch(/\/v1\/manifest\/schema$/);
    await call('get', '/openapi.json', { auth: 'none' });
    await call('get', '/docs', { auth: 'none' });
    await call('get', '/metrics', { auth: 'none' });
  });

  test('errors 400, 401, 403, 404 and 429 match the Error schema', async () => {
    const bad = await call('get', '/devices?page_size=1001');
    expect(bad.body).toEqual({
      message: 'page_size must be an integer from 1 to 1000',
      details: [{ path: 'page_size', message: 'page_size must be an integer from 1 to 1000' }],
    });
    expect((await call('get', '/v1/groups?tags=&menus=')).status).toBe(400);
    expect((await call('get', '/v1/devices/options?limit=0&format=xml')).body.details).toHaveLength(2);
    expect((await call('get', '/v1/triggers/device-status?type=bogus')).status).toBe(400);
    expect((await call('get', '/v1/events?after=evt_unknown')).status).toBe(400);
    expect((await call('post', '/v1/hooks', { body: { target_url: 42 } })).status).toBe(400);
    expect((await call('post', '/v1/hooks', { body: { target_url: receiver.url, events: [] } })).status).toBe(400);

    const missing = await call('get', '/devices', { auth: 'none' });
    expect([missing.status, missing.body, missing.headers['www-authenticate']]).toEqual([401, { message: 'Missing API key' }, 'Bearer']);
    expect((await call('get', '/v1/menus', { auth: 'none' })).status).toBe(401);
    expect((await call('get', '/v1/hooks', { key: 'sk_test_not_a_real_key_00000' })).body).toEqual({ message: 'Invalid API key' });

    expect((await call('get', '/devices', { key: keys.anaMenuOnly })).body).toEqual({
      message: 'Invalid scopes',
      details: [{ path: 'scope', message: 'needs device:read' }],
    });
    expect((await call('get', '/v1/menus', { key: keys.anaNoScopes })).status).toBe(403);
    expect((await call('post', '/v1/hooks', { key: keys.ben, body: { target_url: receiver.url } })).status).toBe(403);

    expect((await call('get', '/devices/00:00:00:00:00:00')).body).toEqual({ message: 'Device not found' });
    expect((await call('get', '/v1/hooks/hook_nope')).body).toEqual({ message: 'Hook not found' });
    expect((await call('delete', '/v1/hooks/hook_nope')).status).toBe(404);
    expect((await call('get', '/v1/hooks/hook_nope/deliveries')).status).toBe(404);

    const limited = await buildTestApp({ dataset: catalog() });
    try {
      for (let i = 0; i < 20; i += 1) await call('get', '/v1/me', { app: limited.app, key: `sk_test_wrong_key_${String(i).padStart(10, '0')}` });
      const res = await call('get', '/v1/me', { app: limited.app });
      expect([res.status, res.body, res.headers['retry-after']]).toEqual([429, { message: 'Too many requests' }, expect.any(String)]);
    } finally {
      await limited.close();
    }
  });

  test('upstream mode: /v1/me, 502 and 504 match too', async () => {
    const upstream = await new FakeUpstream(catalog()).start();
    const u = await buildTestApp({
      env: { DEVICE_API_URL: upstream.baseUrl, MENU_API_URL: upstream.baseUrl, UPSTREAM_TIMEOUT_MS: '3000', UPSTREAM_RETRIES: '0' },
    });
    try {
      expect((await call('get', '/v1/me', { app: u.app })).body).toEqual({ key: { scopes: null }, account: null });
      await call('get', '/devices', { app: u.app });
      await call('get', '/v1/groups', { app: u.app });
      upstream.failAlways({ pathPrefix: '/v1/groups', status: 503 });
      expect((await call('get', `/v1/groups?menus=${menuIds.breakfast}`, { app: u.app })).body).toEqual({ message: 'Upstream unavailable' });
      upstream.failAlways({ pathPrefix: '/devices', hang: true });
      expect((await call('get', '/devices?page=2', { app: u.app })).body).toEqual({ message: 'Upstream timeout' });
    } finally {
      upstream.failAlways(null);
      await u.close();
      await upstream.stop();
    }
  });

  test('the operator API: accounts, users, keys (create, change, roll, revoke), queue', async () => {
    const admin = { auth: 'admin' as const };
    await call('get', '/admin/v1/accounts', admin);
    await call('get', '/admin/v1/users?account_id=acc_harbor', admin);
    await call('get', '/admin/v1/keys?limit=2', admin);
    const created = await call('post', '/admin/v1/keys', {
      ...admin,
      body: { user_id: 'usr_ben', scopes: ['menu:read'], name: 'OpenAPI', expires_at: 'now+1d', rate_limit_per_minute: 60 },
    });
    expect(created.status).toBe(201);
    expect((await call('patch', `/admin/v1/keys/${created.body.id}`, { ...admin, body: { name: 'Renamed', expires_at: null } })).status).toBe(200);
    const rolled = await call('post', `/admin/v1/keys/${created.body.id}/roll`, { ...admin, body: { grace_seconds: 60 } });
    expect(rolled.status).toBe(201);
    expect((await call('delete', `/admin/v1/keys/${rolled.body.id}`, admin)).status).toBe(204);
    expect((await call('post', `/admin/v1/keys/${rolled.body.id}/roll`, { ...admin, body: { grace_seconds: 60 } })).status).toBe(409);
    expect((await call('get', '/admin/v1/queue', admin)).status).toBe(200);
    expect((await call('get', '/admin/v1/keys?limit=0', admin)).status).toBe(400);
    expect((await call('get', '/admin/v1/accounts', { auth: 'none' })).status).toBe(401);
  });

  test('every documented operation was exercised with a successful response', () => {
    expect(documentedRoutes(doc).filter((route) => !exercised.has(route))).toEqual([]);
  });
});

describe('GET /docs', () => {
  test('HTML whose every asset loads from this server; no external URL anywhere in the page', async () => {
    const res = await request(t.app)
      .get('/docs')
      .expect(200)
      .expect('Content-Type', /^text\/html/);
    expect(res.text).not.toMatch(/https?:\/\//i);
    expect(res.text).not.toMatch(/(src|href)\s*=\s*["']?\/\//i);
    const assets = [...res.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(expect.arrayContaining(['/docs/assets/swagger-ui.css', '/docs/assets/swagger-ui-bundle.js']));
    for (const asset of assets) {
      expect(asset.startsWith('/')).toBe(true);
      const loaded = await request(t.app).get(asset);
      expect([asset, loaded.status]).toEqual([asset, 200]);
      expect(Number(loaded.headers['content-length'] ?? loaded.body?.length ?? 0)).toBeGreaterThan(0);
    }
    // The inline init points at this server's document.
    const spec = /"url":"([^"]+)"/.exec(res.text)?.[1];
    expect(spec).toBe('/openapi.json');
    await request(t.app).get(spec!).expect(200);
  });

  test('one key authorizes every operation: every requirement names only key schemes, and the page links them', async () => {
    const keySchemes = Object.entries(doc.components.securitySchemes as Json)
      .filter(([, scheme]) => scheme.type === 'apiKey' || (scheme.type === 'http' && scheme.scheme === 'bearer'))
      .map(([name]) => name);
    expect(keySchemes.sort()).toEqual(['AdminToken', 'ApiKeyHeader', 'BearerAuth']);
    for (const { where, op } of operationsOf(doc)) {
      for (const requirement of (op.security ?? []) as Json[]) {
        for (const scheme of Object.keys(requirement)) expect([where, keySchemes.includes(scheme)]).toEqual([where, true]);
      }
    }
    // The Swagger UI plugin (src/http/docs-auth.ts, tested in test/unit/docs-auth.test.ts) copies
    // a key entered for one scheme to the other.
    const page = await request(t.app).get('/docs').expect(200);
    expect(page.text).toMatch(/plugins: \[function oneKeyAuthPlugin\(\)/);
    expect(page.text).toContain('wrapActions');
  });

  test('only the files the page needs are served from swagger-ui-dist', async () => {
    await request(t.app).get('/docs/assets/index.html').expect(404, { message: 'Not found' });
    await request(t.app).get('/docs/assets/swagger-initializer.js').expect(404, { message: 'Not found' });
    await request(t.app).get('/docs/assets/../package.json').expect(404);
    await request(t.app).get('/docs/assets/%2e%2e/package.json').expect(404);
  });

  test('no source map is served (1.9 MB of Swagger UI internals)', async () => {
    await request(t.app).get('/docs/assets/swagger-ui-bundle.js.map').expect(404, { message: 'Not found' });
    await request(t.app).get('/docs/assets/swagger-ui.css.map').expect(404, { message: 'Not found' });
  });
});

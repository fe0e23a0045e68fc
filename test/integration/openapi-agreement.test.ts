import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys, menuIds } from '../fixtures/catalog.js';

// The OpenAPI document and the runtime must agree both ways. This walks every parameter and
// request body of the served document, derives boundary values from what each declares
// (minimum/maximum, minLength/maxLength, enum, minItems/maxItems, uniqueItems, items, pattern,
// format, required, nullable), and checks the running service: just inside a bound is
// accepted, just outside is a 400 naming that parameter or field.

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

interface Case {
  what: string;
  value: unknown;
  ok: boolean;
}

const adminToken = 'agreement-test-admin-token-0123456789abcdef';

/** A body each operation accepts, which the cases vary one field at a time. */
const validBodies: Record<string, Json> = {
  '/v1/hooks': {},
  '/admin/v1/keys': { user_id: 'usr_ben', scopes: ['menu:read'], name: 'Agreement' },
  '/admin/v1/keys/{id}': { name: 'Agreement' },
  '/admin/v1/keys/{id}/roll': { grace_seconds: 60 },
  '/v1/hooks/{id}': { enabled: true },
  '/v1/hooks/{id}/recover': { since: '2026-01-01T00:00:00Z' },
  '/v1/hooks/{id}/secret/rotate': {},
};

let t: TestApp;
let doc: Json;
let receiver: Receiver;

beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ADMIN_TOKEN: adminToken } });
  doc = (await request(t.app).get('/openapi.json').expect(200)).body as Json;
  receiver = await new Receiver().start();
});

afterAll(async () => {
  await receiver.stop();
  await t.close();
});

const repeat = (n: number) => 'a'.repeat(n);

/** Distinct values an array's items accept, `n` of them (the enum's members, in order). */
function itemValues(items: Json, n: number): string[] {
  if (items.enum) return (items.enum as string[]).slice(0, n);
  return Array.from({ length: n }, (_, i) => `v${i}`.padEnd(items.minLength ?? 1, 'x'));
}

/** A string of exactly `length` characters that satisfies the schema's other rules. */
function stringOf(schema: Json, length: number): string {
  if (schema.format === 'uri' && length > 0) {
    const base = `${receiver.url}?pad=`;
    return base + repeat(length - base.length);
  }
  return repeat(length);
}

/** Boundary cases of one query/path value (strings, arrays serialised comma-separated). */
function parameterCases(schema: Json): Case[] {
  const cases: Case[] = [];
  const add = (what: string, value: unknown, ok: boolean) => cases.push({ what, value, ok });
  if (schema.type === 'integer') {
    const min = BigInt(schema.minimum);
    add('minimum', String(min), true);
    add('minimum - 1', String(min - 1n), false);
    if (schema.maximum !== undefined) {
      add('maximum', String(BigInt(schema.maximum)), true);
      add('maximum + 1', String(BigInt(schema.maximum) + 1n), false);
    }
    for (const text of [` ${min}`, `${min} `, `+${min}`, `${min}.0`, `${min}e0`]) add(`not digits: ${JSON.stringify(text)}`, text, false);
  } else if (schema.type === 'boolean') {
    for (const text of ['true', 'false']) add(text, text, true);
    for (const text of ['TRUE', '1', '']) add(JSON.stringify(text), text, false);
  } else if (schema.type === 'string') {
    for (const value of schema.enum ?? []) add(`enum ${value}`, value, true);
    if (schema.enum) add('not in enum', `${schema.enum[0]}x`, false);
    if (schema.maxLength !== undefined) {
      add('maxLength', stringOf(schema, schema.maxLength), true);
      add('maxLength + 1', stringOf(schema, schema.maxLength + 1), false);
    }
    if (schema.minLength > 0) add('minLength - 1', stringOf(schema, schema.minLength - 1), false);
  } else if (schema.type === 'array') {
    const items = schema.items as Json;
    const max = schema.maxItems as number;
    add('maxItems', itemValues(items, max), true);
    add('maxItems + 1 (a repeat)', [...itemValues(items, max), itemValues(items, 1)[0]], false);
    if (schema.minItems > 0) add('no items', [], false);
    if (items.minLength > 0) add('an empty item', [itemValues(items, 1)[0], ''], false);
    if (items.pattern === '\\S') add('a blank item', [itemValues(items, 1)[0], ' '], false);
    if (items.enum) add('an item not in enum', [`${items.enum[0]}x`], false);
  }
  return cases;
}

/** Boundary cases of one body field (JSON values). */
function fieldCases(schema: Json): Case[] {
  const branches = (schema.anyOf as Json[] | undefined) ?? [schema];
  const cases: Case[] = [];
  for (const branch of branches) {
    if (branch.type === 'null') cases.push({ what: 'null', value: null, ok: true });
    if (branch.type === 'string') {
      cases.push(...parameterCases(branch));
      if (branch.pattern || branch.format) cases.push({ what: 'pattern/format', value: 'not a uri', ok: false });
      cases.push({ what: 'not a string', value: 42, ok: false });
    }
    if (branch.type === 'array') {
      const items = branch.items as Json;
      for (const c of parameterCases(branch)) cases.push(c);
      if (branch.uniqueItems) cases.push({ what: 'uniqueItems', value: [itemValues(items, 1)[0], itemValues(items, 1)[0]], ok: false });
      if (items.maxLength !== undefined) {
        cases.push({ what: 'item maxLength', value: [repeat(items.maxLength)], ok: true });
        cases.push({ what: 'item maxLength + 1', value: [repeat(items.maxLength + 1)], ok: false });
      }
      cases.push({ what: 'not an array', value: 'x', ok: false });
    }
  }
  return cases;
}

function keyHeader(op: Json): [string, string] {
  const schemes = (op.security as Json[]).flatMap((requirement) => Object.keys(requirement));
  if (schemes.includes('AdminToken')) return ['Authorization', `Bearer ${adminToken}`];
  return schemes.includes('ApiKeyHeader') ? ['X-API-Key', keys.ana] : ['Authorization', `Bearer ${keys.ana}`];
}

const pathValues: Record<string, string> = { menuId: menuIds.allDay };

function serialise(value: unknown): string {
  return Array.isArray(value) ? value.map((v) => encodeURIComponent(String(v))).join(',') : encodeURIComponent(String(value));
}

function verdict(res: request.Response, name: string): 'accepted' | 'refused' | string {
  if (res.status === 400) {
    const named = (res.body.details as Json[] | undefined)?.some(
      (detail) => detail.path === name || detail.path.startsWith(`${name}[`) || detail.path.startsWith(`${name}.`),
    );
    return named ? 'refused' : `400 naming something else: ${JSON.stringify(res.body)}`;
  }
  return res.status < 400 || res.status === 404 ? 'accepted' : `status ${res.status}`;
}

test('every declared parameter bound holds at runtime, both ways', async () => {
  const tested = new Set<string>();
  const mismatches: string[] = [];
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (method !== 'get') continue;
      const [header, value] = keyHeader(op as Json);
      for (const parameter of ((op as Json).parameters ?? []) as Json[]) {
        if (parameter.in !== 'query' && parameter.in !== 'path') continue;
        for (const c of parameterCases(parameter.schema as Json)) {
          // An empty path segment is another URL (no route), not an empty parameter.
          if (parameter.in === 'path' && c.value === '') continue;
          let path = template.replace(/\{(\w+)\}/g, (_m, name: string) => pathValues[name] ?? name);
          let query = '';
          if (parameter.in === 'path')
            path = template.replace(`{${parameter.name}}`, serialise(c.value)).replace(/\{(\w+)\}/g, (_m, name: string) => pathValues[name]!);
          else query = `?${parameter.name}=${serialise(c.value)}`;
          // `tree` is the format whose `parent` is read; other formats ignore it.
          if (parameter.name === 'parent') query += '&format=tree';
          const res = await request(t.app)
            .get(path + query)
            .set(header, value);
          const got = verdict(res, parameter.name);
          tested.add(`${template} ${parameter.name}`);
          if (got !== (c.ok ? 'accepted' : 'refused'))
            mismatches.push(
              `GET ${template} ${parameter.name} ${c.what} (${JSON.stringify(c.value).slice(0, 60)}): expected ${c.ok ? 'accepted' : 'refused'}, got ${got}`,
            );
        }
      }
    }
  }
  expect(mismatches).toEqual([]);
  // The walk reached the parameters the issue is about (and every other bounded one).
  for (const name of [
    '/devices page',
    '/devices page_size',
    '/devices ids',
    '/devices is_online',
    '/v1/triggers/device-status type',
    '/v1/triggers/device-status limit',
    '/v1/events limit',
    '/v1/menus/{menuId}/groups/options menuId',
    '/v1/menus/{menuId}/groups/options limit',
    '/v1/devices/options q',
    '/v1/groups tags',
  ]) {
    expect([name, tested.has(name)]).toEqual([name, true]);
  }
});

test('every declared request body rule holds at runtime, both ways', async () => {
  const mismatches: string[] = [];
  let count = 0;
  for (const [template, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      const body = (op as Json).requestBody?.content?.['application/json']?.schema as Json | undefined;
      if (!body) continue;
      const [header, value] = keyHeader(op as Json);
      const valid: Json = template === '/v1/hooks' ? { target_url: receiver.url } : validBodies[template]!;
      const send = (payload: unknown) =>
        request(t.app)
          [method as 'post'](template)
          .set(header, value)
          .send(payload as object);
      expect(verdict(await send(valid), '$')).toBe('accepted');
      for (const field of (body.required ?? []) as string[]) {
        const { [field]: _omitted, ...rest } = valid;
        const got = verdict(await send(rest), field);
        if (got !== 'refused') mismatches.push(`${template} without required ${field}: got ${got}`);
      }
      for (const [field, schema] of Object.entries(body.properties as Json)) {
        for (const c of fieldCases(schema as Json)) {
          count += 1;
          const got = verdict(await send({ ...valid, [field]: c.value }), field);
          if (got !== (c.ok ? 'accepted' : 'refused'))
            mismatches.push(`${method.toUpperCase()} ${template} ${field} ${c.what}: expected ${c.ok ? 'accepted' : 'refused'}, got ${got}`);
        }
      }
    }
  }
  expect(mismatches).toEqual([]);
  expect(count).toBeGreaterThan(15);
});

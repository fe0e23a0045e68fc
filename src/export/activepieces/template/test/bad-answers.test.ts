import assert from 'node:assert/strict';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { runOperation } from '../src/lib/actions';
import { credentials } from '../src/lib/connector';
import { fetchChoices } from '../src/lib/options';
import { apiKey, context, definition, dropdown, signageConnector, triggers } from './harness';

// A server on a local port that answers 200 badly (what a proxy or a broken deployment in front
// of the connector may do), or never: every action, dropdown, trigger and the connection check
// must then fail with a clear error, never return an empty list or the bad object.
// CONNECTOR_TIMEOUT_MS shortens the 30 s bound while the server never answers; a bad answer
// comes at once, and gets a generous bound, so a busy machine is not mistaken for a hanging one.

const timeoutMs = 400;
const generousMs = 15_000;
const answers: Record<string, { body: string; error: RegExp }> = {
  'invalid JSON': { body: '{"id": "a4:83', error: /not valid JSON/ },
  'an object where something else belongs': { body: '{"unexpected": true}', error: /unexpected answer to .*expected/ },
  'a list of records without ids': { body: '[{"name": "Front counter"}]', error: /unexpected answer to .*expected/ },
};

let server: Server;
let auth: { type: string; props: { base_url: string; api_key: string } };
let mode = 'hang';
const hanging = new Set<ServerResponse>();

before(async () => {
  process.env['CONNECTOR_TIMEOUT_MS'] = String(generousMs);
  server = createServer((req, res) => {
    req.resume();
    if (mode === 'hang') {
      hanging.add(res);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(answers[mode]!.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  auth = { type: 'CUSTOM_AUTH', props: { base_url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, api_key: apiKey } };
});

after(async () => {
  delete process.env['CONNECTOR_TIMEOUT_MS'];
  for (const res of hanging) res.destroy();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

type Validate = (params: { auth: unknown; server: unknown }) => Promise<{ valid: boolean; error?: string }>;
const validate = (signageConnector.auth as unknown as { validate: Validate }).validate;
type Trigger = (typeof triggers)[string];
const call = (trigger: Trigger, method: 'onEnable' | 'run' | 'test', ctx: never) => (trigger[method] as (ctx: never) => Promise<unknown>)(ctx);

/** Every value an input might need, so that each call reaches the server. */
const values = { menu_id: 'menu-1', menuId: 'menu-1', group_id: 'group-1', device_id: 'a4:83:e7:1f:2b:01' };

/** Each call of the piece that reads an answer, by name: a rejected promise is its error. */
function calls(): Array<[string, () => Promise<unknown>]> {
  const list: Array<[string, () => Promise<unknown>]> = [
    [
      'the connection check',
      async () => {
        const result = await validate({ auth: auth.props, server: {} });
        if (!result.valid) throw new Error(result.error);
        return result;
      },
    ],
  ];
  for (const source of definition.optionSources) {
    list.push([`dropdown ${source.id}`, () => fetchChoices(credentials(auth), source, values, undefined)]);
  }
  for (const operation of definition.operations) {
    list.push([`action ${operation.id}`, () => runOperation(operation, auth, values)]);
  }
  for (const spec of definition.triggers) {
    const ctx = () => context({ auth, webhookUrl: 'https://example.com/hook' });
    list.push([`enabling ${spec.id}`, () => call(triggers[spec.id]!, 'onEnable', ctx())]);
    list.push([`testing ${spec.id}`, () => call(triggers[spec.id]!, 'test', ctx())]);
    list.push([`polling ${spec.id}_polling`, () => call(triggers[`${spec.id}_polling`]!, 'run', ctx())]);
  }
  return list;
}

for (const [answer, { error }] of Object.entries(answers)) {
  describe(`a 200 with ${answer}`, () => {
    test('fails every call with a clear error', async () => {
      mode = answer;
      process.env['CONNECTOR_TIMEOUT_MS'] = String(generousMs);
      for (const [name, run] of calls()) await assert.rejects(run(), error, name);
    });

    test('a dropdown shows the error instead of its choices', async () => {
      mode = answer;
      process.env['CONNECTOR_TIMEOUT_MS'] = String(generousMs);
      const operation = definition.operations.find((candidate) => candidate.inputs.some((input) => input.optionsFrom === 'devices'));
      if (!operation) return;
      const key = operation.inputs.find((input) => input.optionsFrom === 'devices')!.key;
      const prop = dropdown(signageConnector.actions()[operation.id]!.props, key);
      const state = await prop.options({ auth });
      assert.equal(state.disabled, true);
      assert.match(state.placeholder ?? '', error);
    });
  });
}

describe('a connector that never answers', () => {
  test('fails every call once CONNECTOR_TIMEOUT_MS has passed', async () => {
    mode = 'hang';
    process.env['CONNECTOR_TIMEOUT_MS'] = String(timeoutMs);
    for (const [name, run] of calls()) {
      const started = Date.now();
      await assert.rejects(run(), new RegExp(`no answer from the connector within ${timeoutMs / 1000} s`), name);
      // Generous: only shows the bound is the one set, not the 30 s default.
      assert.ok(Date.now() - started < 20_000, `${name} took ${Date.now() - started} ms`);
    }
  });
});

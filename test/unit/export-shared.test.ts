import { expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { generatedSharedFiles, sharedSourceDir } from '../../src/export/shared/generated.js';
import { typeOf } from '../../src/export/shared/spec-types.js';
import * as standardWebhooks from '../../src/export/shared/template/standard-webhooks.js';

/**
 * The generated files of src/export/shared/template/ are what `npm run export:shared` writes
 * now: the manifest types follow the manifest schema, and the JavaScript apps' verification
 * follows standard-webhooks.ts.
 */
test('the generated shared template files are up to date (run `npm run export:shared` after changing the manifest schema or standard-webhooks.ts)', () => {
  for (const [name, text] of generatedSharedFiles()) expect({ name, text: readFileSync(join(sharedSourceDir, name), 'utf8') }).toEqual({ name, text });
});

test('the manifest types are the manifest schema as TypeScript', () => {
  const types = generatedSharedFiles().get('manifest.d.ts')!;
  expect(types).toContain("export interface Endpoint {\n\tmethod: 'GET' | 'POST' | 'DELETE';\n\tpath: string;\n\tquery?: Record<string, string>;");
  expect(types).toContain('\toptionParams: Record<string, string>;');
  expect(typeOf({ type: ['string', 'number'] })).toBe('string | number');
  expect(typeOf({ type: 'array', items: { enum: ['a', 'b'] } })).toBe("Array<'a' | 'b'>");
  expect(typeOf({ type: 'object', additionalProperties: {} })).toBe('Record<string, unknown>');
});

test('the verification behaves the same in each module format: the TypeScript source, its ES module and CommonJS compilations', async () => {
  type Module = typeof standardWebhooks;
  const forms: Array<[string, Module]> = [
    ['ts', standardWebhooks],
    ['mjs', (await import(pathToFileURL(join(sharedSourceDir, 'standard-webhooks.mjs')).href)) as Module],
    ['cjs', createRequire(import.meta.url)(join(sharedSourceDir, 'standard-webhooks.cjs')) as Module],
  ];
  // Standard Webhooks' published test vector.
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const body = '{"test": 2432232314}';
  const at = 1614265330;
  const signature = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';
  const headers = {
    'Http-Webhook-Id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'Http-Webhook-Timestamp': String(at),
    'Http-Webhook-Signature': `v1,other ${signature}`,
  };
  for (const [form, m] of forms) {
    const answers = {
      form,
      sign: m.sign(secret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', String(at), body),
      valid: m.signatureProblem(secret, headers, body, m.defaultTolerance, at + 300),
      forged: m.signatureProblem(secret, headers, `${body} `, m.defaultTolerance, at),
      old: m.signatureProblem(secret, headers, body, m.defaultTolerance, at + 301),
      queued: m.signatureProblem(secret, headers, body, m.queuedTolerance, at + 3600),
      ahead: m.signatureProblem(secret, headers, body, m.queuedTolerance, at - 301),
      noSecret: m.signatureProblem('', headers, body, m.defaultTolerance, at),
      noBody: m.signatureProblem(secret, headers, undefined, m.defaultTolerance, at),
      unsigned: m.signatureProblem(secret, { 'webhook-id': 'x' }, body),
      fraction: m.signatureProblem(secret, { ...headers, 'Http-Webhook-Timestamp': `${at}.5` }, body, m.defaultTolerance, at),
    };
    expect(answers).toEqual({
      form,
      sign: signature,
      valid: null,
      forged: 'the signature does not match',
      old: 'the webhook timestamp is too old or in the future',
      queued: null,
      ahead: 'the webhook timestamp is too old or in the future',
      noSecret: 'the hook has no secret',
      noBody: 'the raw body is missing',
      unsigned: 'the webhook signature headers are missing',
      fraction: 'the webhook timestamp is too old or in the future',
    });
  }
});

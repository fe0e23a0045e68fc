import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiKey, baseUrl, signageConnector } from './harness';

type Validate = (params: { auth: unknown; server: unknown }) => Promise<{ valid: boolean; error?: string }>;
const validate = (signageConnector.auth as unknown as { validate: Validate }).validate;

test('the connection has base_url and a secret api_key', () => {
  const props = (signageConnector.auth as unknown as { props: Record<string, { type: string; required: boolean }> }).props;
  assert.deepEqual(Object.keys(props).sort(), ['api_key', 'base_url']);
  assert.equal(props['api_key']?.type, 'SECRET_TEXT');
  assert.equal(props['api_key']?.required, true);
});

test('validate accepts the key', async () => {
  assert.deepEqual(await validate({ auth: { base_url: baseUrl, api_key: apiKey }, server: {} }), { valid: true });
});

test("validate refuses a wrong key with the connector's message", async () => {
  const result = await validate({ auth: { base_url: baseUrl, api_key: 'sk_not_a_real_key_0000000000000000' }, server: {} });
  assert.equal(result.valid, false);
  assert.match(result.error ?? '', /Invalid API key \(HTTP 401 on GET \/v1\/me\)/);
});

test('validate names an unreachable connector', async () => {
  const result = await validate({ auth: { base_url: 'http://127.0.0.1:9', api_key: apiKey }, server: {} });
  assert.equal(result.valid, false);
  assert.match(result.error ?? '', /cannot reach http:\/\/127\.0\.0\.1:9/);
});

import { z } from 'zod';
import type { ParamsSchema } from '../http/query.js';
import { schemaRef } from '../http/responses.js';
import { defaultErrorText, type ErrorStatus, type Json, type OperationSpec } from '../http/operation-spec.js';

export type { ErrorStatus, Json, OperationSpec, ResponseSpec } from '../http/operation-spec.js';
export { defaultErrorText };

/**
 * How one operation of the OpenAPI document is written: an `OperationSpec` (what the route
 * reads, its zod schemas, its responses) becomes an OpenAPI operation object, its parameters
 * and bodies generated from the same zod schemas the route validates with, and the error
 * responses its key and parameters imply added.
 */

// ---- JSON Schema from zod ----

const maxSafe = Number.MAX_SAFE_INTEGER;

/**
 * Drops what carries no information: `$schema`/`$id` of a nested schema, the safe-integer
 * bounds of `.int()`. Keys of a `properties` map are field names, not keywords: a field called
 * `$schema` (the manifest has one) stays.
 */
export function tidy(schema: unknown, keepBounds = false, fieldNames = false): unknown {
  if (Array.isArray(schema)) return schema.map((item) => tidy(item, keepBounds));
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!fieldNames && (key === '$schema' || key === '$id')) continue;
    if (!fieldNames && !keepBounds && ((key === 'maximum' && value === maxSafe) || (key === 'minimum' && value === -maxSafe))) continue;
    out[key] = tidy(value, keepBounds, !fieldNames && key === 'properties');
  }
  return out;
}

/**
 * `keepBounds`: for what a client sends, the safe-integer bounds are real limits (`page` above
 * 2^53-1 is refused), so they stay in the document.
 */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output', keepBounds = false): Json {
  return tidy(z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'throw' }), keepBounds) as Json;
}

/**
 * Parameters from a zod object: the output side of each field (what the route works with:
 * integers, booleans, lists), its description lifted to the parameter. Lists are
 * comma-separated (`style: form, explode: false`); repeating the parameter works too.
 */
function parametersOf(schema: ParamsSchema, location: 'query' | 'path'): Json[] {
  return Object.entries(schema.shape).map(([name, field]) => {
    const { description, ...fieldSchema } = jsonSchema(field as z.ZodType, 'output', true);
    const required = location === 'path' || !(field as z.ZodType).safeParse(undefined).success;
    const parameter: Json = { name, in: location, required };
    if (description !== undefined) parameter.description = description;
    if (fieldSchema.type === 'array') Object.assign(parameter, { style: 'form', explode: false });
    parameter.schema = fieldSchema;
    return parameter;
  });
}

// ---- Shared pieces ----

const errorContent = { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } };
const requestIdHeader = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } };
/** On every answer to a good key (docs/keys.md), when a rate limit applies. */
const rateLimitHeaders = { 'RateLimit-Policy': { $ref: '#/components/headers/RateLimitPolicy' }, RateLimit: { $ref: '#/components/headers/RateLimit' } };

function errorResponse(status: ErrorStatus, description: string, spec: OperationSpec): Json {
  const headers: Json = { ...requestIdHeader, ...(spec.auth && (status === 403 || status === 429) ? rateLimitHeaders : {}) };
  if (status === 401 && (spec.auth?.headers === 'bearer' || spec.admin)) headers['WWW-Authenticate'] = { $ref: '#/components/headers/WWWAuthenticate' };
  if (status === 429 || status === 502 || status === 503) headers['Retry-After'] = { $ref: '#/components/headers/RetryAfter' };
  return { description, headers, content: errorContent };
}

function security(auth: OperationSpec['auth'], admin = false): Json[] {
  if (admin) return [{ AdminToken: [] }];
  if (!auth) return [];
  const apiKey = { ApiKeyHeader: auth.scopes };
  const bearer = { BearerAuth: auth.scopes };
  if (auth.headers === 'bearer') return [bearer];
  if (auth.headers === 'x-api-key') return [apiKey];
  return [apiKey, bearer];
}

function keyText(auth: OperationSpec['auth'], admin = false): string {
  if (admin) return 'Operator: `Authorization: Bearer <ADMIN_TOKEN>`. Without `ADMIN_TOKEN` every operator path answers 404 `Not found`.';
  if (!auth) return 'No key needed.';
  const header = { bearer: '`Authorization: Bearer <key>`', 'x-api-key': '`X-API-Key: <key>`', either: '`X-API-Key: <key>` or `Authorization: Bearer <key>`' }[
    auth.headers
  ];
  const scopes = auth.scopes.length > 0 ? `scope ${auth.scopes.map((s) => `\`${s}\``).join(' and ')}` : 'no scope';
  return `Key: ${header}; ${scopes}.`;
}

export function operation(spec: OperationSpec): Json {
  const parameters = [
    ...(spec.params ? parametersOf(spec.params, 'path') : []),
    ...(spec.query ? parametersOf(spec.query, 'query') : []),
    ...(spec.extraParameters ?? []),
  ];
  const responses: Json = {};
  for (const [status, response] of Object.entries(spec.responses)) {
    const out: Json = { description: response.description, headers: { ...requestIdHeader, ...(spec.auth ? rateLimitHeaders : {}), ...response.headers } };
    if (response.schema) out.content = { 'application/json': { schema: schemaRef(response.schema) } };
    if (response.content) out.content = { [response.content.type]: { schema: response.content.schema } };
    responses[status] = out;
  }
  const errors: Partial<Record<ErrorStatus, string>> = {};
  if (parameters.length > 0 || spec.body) errors[400] = defaultErrorText[400];
  if (spec.auth) {
    errors[401] = defaultErrorText[401];
    if (spec.auth.scopes.length > 0) errors[403] = defaultErrorText[403];
    errors[429] = defaultErrorText[429];
    errors[502] = defaultErrorText[502];
    errors[503] = defaultErrorText[503];
    errors[504] = defaultErrorText[504];
  }
  if (spec.admin) {
    errors[401] = '`Missing admin token` or `Invalid admin token` (counted by the failed-attempt limit).';
    errors[404] = '`Not found`: `ADMIN_TOKEN` is not set, so the operator API is off.';
    errors[429] = '`Too many requests`: 20 failed key or token attempts from this client within a minute.';
    errors[503] = defaultErrorText[503];
  }
  Object.assign(errors, spec.errors);
  for (const status of Object.keys(errors).map(Number).sort() as ErrorStatus[]) {
    responses[status] = errorResponse(status, errors[status]!, spec);
  }
  const op: Json = {
    operationId: spec.operationId,
    tags: [spec.tag],
    summary: spec.summary,
    description: [spec.description, keyText(spec.auth, spec.admin)].filter(Boolean).join('\n\n'),
    security: security(spec.auth, spec.admin),
  };
  if (parameters.length > 0) op.parameters = parameters;
  if (spec.body) {
    op.requestBody = { required: !spec.bodyOptional, content: { 'application/json': { schema: jsonSchema(spec.body, 'input', true) } } };
  }
  op.responses = responses;
  return op;
}

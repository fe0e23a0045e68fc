import { z } from 'zod';
import type { Manifest } from '../manifest/schema.js';
import type { Route } from '../http/route.js';
import { apiSchemas } from '../http/responses.js';
import { operation, tidy, type Json } from './operation.js';
import { operations, webhooks } from './operations.js';

/**
 * The OpenAPI 3.1 document of the service, generated from the route declarations the app
 * serves (src/http/routes/: paths, keys, the zod schemas the routes validate with, answers)
 * and the response schemas (src/http/responses.ts).
 * test/integration/openapi.test.ts checks that every registered route is here and that real
 * responses match what is documented; openapi-agreement.test.ts that every declared bound
 * holds at runtime; openapi-lint.test.ts that Redocly and Spectral find no error.
 */

/** Every registered response schema, as `components.schemas`. */
function componentSchemas(): Json {
  const { schemas } = z.toJSONSchema(apiSchemas, {
    target: 'draft-2020-12',
    io: 'output',
    uri: (id) => `#/components/schemas/${id}`,
  });
  if ('__shared' in schemas) throw new Error('openapi: a response schema needs an id (shared definitions are not emitted)');
  return tidy(schemas) as Json;
}

/** The document of these routes without `servers` (those depend on the request); build once, reuse. */
export function buildOpenApiDocument(manifest: Manifest, routes: readonly Route[]): Json {
  const paths: Record<string, Json> = {};
  for (const spec of operations(routes)) {
    (paths[spec.path] ??= {})[spec.method] = operation(spec);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: manifest.name,
      version: manifest.version,
      description: [
        manifest.description,
        'Errors are JSON `{"message"}`; validation errors add `"details": [{"path", "message"}]` naming every bad parameter. Unknown query parameters are ignored; a repeated scalar parameter is a 400. An unexpected error is a 500 `{"message":"Internal error"}`.',
        'Every response carries `X-Request-Id` (a well-formed incoming one is kept).',
        'Machine-readable description for automation platforms: `GET /v1/manifest`.',
      ].join('\n\n'),
    },
    servers: [],
    tags: [
      { name: 'Devices', description: 'The device area: `Authorization: Bearer`.' },
      { name: 'Menus', description: 'The menu area: `X-API-Key`.' },
      { name: 'Options', description: 'Dropdown options, declared as option sources in the manifest.' },
      { name: 'Account', description: 'The auth test.' },
      { name: 'Triggers', description: 'Device-status events: polling trigger, samples, replay.' },
      { name: 'Webhooks', description: 'REST-hook subscriptions and their deliveries.' },
      { name: 'Service', description: 'Health, readiness, manifest, this reference.' },
      {
        name: 'Operator',
        description:
          'The operator API (`/admin/v1`): accounts, users, keys, queue health. Only when `ADMIN_TOKEN` is set; `Authorization: Bearer <ADMIN_TOKEN>`.',
      },
    ],
    paths,
    webhooks: webhooks(),
    components: {
      schemas: componentSchemas(),
      securitySchemes: {
        ApiKeyHeader: {
          type: 'apiKey',
          in: 'header',
          name: 'X-API-Key',
          description: 'Everything under `/v1`. The same key as `BearerAuth`: on `/docs`, entering it in either box authorizes both.',
        },
        BearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description: 'The device area; also accepted by `/v1/me`, device options, triggers, events and hooks. The same key as `ApiKeyHeader`.',
        },
        AdminToken: { type: 'http', scheme: 'bearer', description: 'The operator API (`/admin/v1`): `ADMIN_TOKEN`, not a key.' },
      },
      headers: {
        RequestId: { description: 'The request id, also sent upstream.', schema: { type: 'string' } },
        RetryAfter: { description: 'Seconds to wait.', schema: { type: 'integer', minimum: 0 } },
        WWWAuthenticate: { description: '`Bearer` (device area).', schema: { type: 'string' } },
        RateLimitPolicy: {
          description: 'The key\u2019s rate limit, e.g. `"default";q=1200;w=60` (requests per 60 s). Absent when no limit applies.',
          schema: { type: 'string' },
        },
        RateLimit: { description: 'What is left of it: `"default";r=<requests left>;t=<seconds until the quota is whole again>`.', schema: { type: 'string' } },
      },
    },
  };
}

/** The document for one base URL. */
export function openApiDocument(base: Json, serverUrl: string): Json {
  return { ...base, servers: [{ url: serverUrl }] };
}

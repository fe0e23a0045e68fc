import { AppError } from '../../errors.js';
import { manifestSchemaPath, servedManifest, servedManifestSchema } from '../../manifest/served.js';
import { publicBaseUrl } from '../base-url.js';
import { ConnectorManifest, Health, Me, Readiness } from '../responses.js';
import { defineRoute } from '../route.js';

/** docs/service.md: liveness, readiness, the connector manifest and the auth test. */

export const health = defineRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'health',
  tag: 'Service',
  summary: 'Liveness',
  responses: { 200: { description: 'The process is up.', schema: Health } },
  handler({ res }) {
    res.json({ status: 'ok' });
  },
});

export const readiness = defineRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'readiness',
  tag: 'Service',
  summary: 'Readiness',
  description: 'The database is usable and, in upstream mode, each upstream answered within the last minute or answers now.',
  responses: {
    200: { description: 'Ready.', schema: Readiness },
    503: { description: 'Not ready; `checks` says what failed.', schema: Readiness },
  },
  async handler({ res, services }) {
    const checks = await services.readiness();
    const ready = Object.values(checks).every((check) => check === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  },
});

// The connector manifest for platforms and integrators (no key needed): `baseUrl` filled in,
// `$schema` pointing at the schema route below, so a validator can follow it.
export const getManifest = defineRoute({
  method: 'get',
  path: '/v1/manifest',
  operationId: 'getManifest',
  tag: 'Service',
  summary: 'Connector manifest',
  description:
    'For platforms and integrators: `baseUrl` is `PUBLIC_URL`, or taken from the request (a malformed `Host` is replaced by `localhost:<port>`); `$schema` is the absolute URL of its JSON Schema.',
  responses: { 200: { description: 'The manifest.', schema: ConnectorManifest } },
  handler({ req, res, services }) {
    res.json(servedManifest(services.manifest, publicBaseUrl(req, services.config.PUBLIC_URL)));
  },
});

export const getManifestSchema = defineRoute({
  method: 'get',
  path: manifestSchemaPath,
  operationId: 'getManifestSchema',
  tag: 'Service',
  summary: 'Connector manifest schema',
  description: 'The JSON Schema (draft 2020-12) the manifest validates against (`manifests/connector.schema.json`, with `$id` set to this URL).',
  responses: { 200: { description: 'JSON Schema.', content: { type: 'application/schema+json', schema: { type: 'object' } } } },
  handler({ req, res, services }) {
    res.type('application/schema+json').send(JSON.stringify(servedManifestSchema(publicBaseUrl(req, services.config.PUBLIC_URL))));
  },
});

// The auth test takes the key either way: platforms send X-API-Key, device-only
// integrations hold a Bearer key. No scope is needed to learn who you are.
export const getMe = defineRoute({
  method: 'get',
  path: '/v1/me',
  operationId: 'getMe',
  tag: 'Account',
  summary: 'Who am I (auth test)',
  description: 'The key and its account in embedded mode; `{"key":{"scopes":null},"account":null}` in upstream mode once the upstream accepted the key.',
  auth: { keys: 'me', headers: 'either', scopes: [] },
  responses: { 200: { description: 'The key and account.', schema: Me } },
  async handler({ res, services, principal }) {
    if (!principal.scopes) {
      await services.confirmKey(principal);
      res.json({ key: { scopes: null }, account: null });
      return;
    }
    if (!principal.accountId) throw new AppError('internal', 'Internal error');
    res.json({
      key: { id: principal.keyId, name: principal.keyName, scopes: [...principal.scopes] },
      account: { id: principal.accountId, name: principal.accountName },
    });
  },
});

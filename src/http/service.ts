import { Router } from 'express';
import type { Services } from '../services.js';
import { authenticate, principalOf } from '../auth/authenticate.js';
import { AppError } from '../errors.js';
import { manifestSchemaPath, servedManifest, servedManifestSchema } from '../manifest/served.js';
import { publicBaseUrl } from './base-url.js';

/** docs/service.md: liveness, readiness and the auth test. */
export function serviceRoutes(services: Services): Router {
  const router = Router();

  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  router.get('/readyz', async (_req, res) => {
    const checks = await services.readiness();
    const ready = Object.values(checks).every((check) => check === 'ok');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });

  // The connector manifest for platforms and integrators (no key needed): `baseUrl` filled in,
  // `$schema` pointing at the schema route below, so a validator can follow it.
  router.get('/v1/manifest', (req, res) => {
    res.json(servedManifest(services.manifest, publicBaseUrl(req, services.config.PUBLIC_URL)));
  });

  router.get(manifestSchemaPath, (req, res) => {
    res.type('application/schema+json').send(JSON.stringify(servedManifestSchema(publicBaseUrl(req, services.config.PUBLIC_URL))));
  });

  // The auth test takes the key either way: platforms send X-API-Key, device-only
  // integrations hold a Bearer key. No scope is needed to learn who you are.
  router.get(
    '/v1/me',
    authenticate({ headers: 'either', verify: services.keys.me, attempts: services.failedAttempts }),
    async (req, res) => {
      const principal = principalOf(req);
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
  );

  return router;
}

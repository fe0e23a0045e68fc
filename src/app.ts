import express, { type Express } from 'express';
import type { Services } from './services.js';
import { errorMiddleware, notFoundRoute } from './errors.js';
import { requestLog } from './http/request-log.js';
import { upstreamRejection } from './auth/authenticate.js';
import { mountRoutes } from './http/router.js';
import { consoleAssets, docsAssets, routes } from './http/routes/index.js';

/** Builds the Express app from ready services. Never reads the environment, never listens. */
export function createApp(services: Services): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // TRUST_PROXY: which peers' X-Forwarded-For names the client (auth/client-address.ts).
  if (services.config.TRUST_PROXY !== undefined) app.set('trust proxy', services.config.TRUST_PROXY);
  app.use(requestLog(services.logger, services.metrics));
  // Every endpoint, from its one declaration (http/routes/); the dropdowns, the hot path, first.
  mountRoutes(app, routes(services.manifest, services.targets), services);
  app.use(docsAssets());
  app.use(consoleAssets(services.config.PUBLIC_URL));
  app.use(notFoundRoute);
  app.use(upstreamRejection);
  app.use(errorMiddleware(services.logger));
  return app;
}

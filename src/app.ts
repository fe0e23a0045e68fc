import express, { type Express } from 'express';
import type { Services } from './services.js';
import { errorMiddleware, notFoundRoute } from './errors.js';
import { requestLog } from './http/request-log.js';
import { upstreamRejection } from './auth/authenticate.js';
import { deviceRoutes } from './http/devices.js';
import { menuRoutes } from './http/menus.js';
import { optionRoutes } from './http/options.js';
import { triggerRoutes } from './http/triggers.js';
import { hookRoutes } from './http/hooks.js';
import { serviceRoutes } from './http/service.js';
import { docsRoutes } from './http/docs.js';
import { metricsRoutes } from './http/metrics.js';

/** Builds the Express app from ready services. Never reads the environment, never listens. */
export function createApp(services: Services): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestLog(services.logger, services.metrics));
  // Dropdowns are the hot path: matched first, registered on the app itself (a nested
  // router would add a second dispatch per request).
  optionRoutes(services, app);
  app.use(serviceRoutes(services));
  app.use(metricsRoutes(services));
  app.use(docsRoutes(services));
  app.use(deviceRoutes(services));
  app.use(menuRoutes(services));
  app.use(triggerRoutes(services));
  app.use(hookRoutes(services));
  app.use(notFoundRoute);
  app.use(upstreamRejection);
  app.use(errorMiddleware(services.logger));
  return app;
}

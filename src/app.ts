import express, { type Express, type Request, type Response } from 'express';
import type { Services } from './services.js';
import { errorMiddleware, notFoundRoute } from './errors.js';
import { requestLog } from './http/request-log.js';
import { upstreamRejection } from './auth/authenticate.js';
import { mountRoutes } from './http/router.js';
import { consoleAssets, docsAssets, routes } from './http/routes/index.js';

/** Builds the Express app from ready services. Never reads the environment, never listens. */
export function createApp(services: Services): Express {
  const app = express();
  keepShapes(app);
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

type Handle = (req: Request, res: Response, callback?: (err?: unknown) => void) => void;

/**
 * Express 5 gives every request and response the app's prototypes (`Object.setPrototypeOf`)
 * before routing them. On V8 a property first added to an object after that costs it a new
 * hidden class: 2 to 4 µs each, measured, and a warm dropdown added fourteen (Express's router
 * six, this app's four and Node.js's listener count on the request; `locals`, `statusCode`,
 * `statusMessage` on the response). Each is created here, with the value Express, Node.js or
 * the app would find, just before Express's own `handle` swaps the prototypes; later writes
 * only change a value (test/integration/request-shapes.test.ts).
 */
function keepShapes(app: Express): void {
  const target = app as unknown as { handle: Handle };
  const handle = target.handle;
  target.handle = function handleKeepingShapes(this: unknown, req, res, callback) {
    const fields = req as unknown as Record<string, unknown>;
    // The request's listener count, inherited until Node.js adds its first listener (at the end).
    fields._eventsCount = (fields._eventsCount as number | undefined) ?? 0;
    // Express's router (baseUrl, originalUrl, next, params, route) and parseurl's cache.
    fields.next = undefined;
    fields.baseUrl = undefined;
    fields.originalUrl = undefined;
    fields._parsedUrl = undefined;
    fields.params = undefined;
    fields.route = undefined;
    // This app's (http/request-log.ts, auth/authenticate.ts, route-pattern.ts).
    req.id = undefined;
    req.principal = undefined;
    req.rejectionContext = undefined;
    req.routePattern = undefined;
    // Express's `res.locals` (it keeps one already there); the status writeHead sets.
    res.locals = Object.create(null) as Response['locals'];
    res.statusCode = 200;
    res.statusMessage = undefined as unknown as string;
    handle.call(this, req, res, callback);
  };
}

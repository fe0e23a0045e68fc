import express, { Router, type Express, type Request, type RequestHandler } from 'express';
import { boundedLru } from '../cache/bounded-lru.js';
import type { Services } from '../services.js';
import { authenticate, confirmDeviceKey, missingScope } from '../auth/authenticate.js';
import { AppError } from '../errors.js';
import { adminToken } from '../auth/admin-token.js';
import { parseBody, parseParams, parseQuery } from './query.js';
import type { Route, RouteAuth } from './route.js';
import { requestServices } from './request-services.js';

/**
 * Express routes from route declarations (`http/route.ts`). Each route runs, in this order:
 * authentication with its first scope; in upstream mode, the device upstream's word on the
 * key, where declared; for a body, its media type, then the JSON parser; the route's further
 * scopes; its query, then path parameters, then body, parsed with its schemas (a problem is a
 * 400 that names it); and the handler with what was parsed.
 */

/** An OpenAPI path (`/v1/hooks/{id}`) as an Express path (`/v1/hooks/:id`). */
function expressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

/**
 * A body that is not declared as JSON is refused before it is read (a form or text body would
 * otherwise be skipped by the JSON parser and reported as missing fields). No body at all is
 * left to the schema: "body must be a JSON object".
 */
const requireJson: RequestHandler = (req, _res, next) => {
  const empty = req.headers['transfer-encoding'] === undefined && Number(req.headers['content-length'] ?? 0) === 0;
  if (!empty && !req.is('application/json')) throw new AppError('unsupported_media_type', 'Content-Type must be application/json');
  next();
};

// Not strict: `42` or `null` parse, so the schema can say "must be a JSON object" rather
// than the parser saying "not valid JSON".
const jsonBody = express.json({ limit: '16kb', strict: false });

function authMiddleware(auth: RouteAuth, services: Services): RequestHandler[] {
  const checked = authenticate({
    headers: auth.headers,
    scope: auth.scopes[0],
    verify: services.keys[auth.keys],
    attempts: services.failedAttempts,
    limits: services.keyLimits,
  });
  return auth.confirmDeviceKey ? [checked, confirmDeviceKey(services)] : [checked];
}

/** The scopes after the first, checked once the body is read; null when there are none. */
function laterScopes(auth: RouteAuth | undefined): ((req: Request) => void) | null {
  const later = auth?.scopes.slice(1) ?? [];
  if (later.length === 0) return null;
  return (req) => {
    const scopes = req.principal?.scopes;
    const missing = scopes ? later.find((scope) => !scopes.has(scope)) : undefined;
    if (missing) throw missingScope(missing);
  };
}

interface ParsedUrl {
  query: unknown;
  params: unknown;
}

/** Parses what the URL carries: the query, then the path parameters; memoised per URL when the route says so. */
function urlParser(route: Route): (req: Request) => ParsedUrl {
  const { query, params, readQuery } = route;
  const parse = (req: Request): ParsedUrl => ({
    query: readQuery ? readQuery(req.query) : query ? parseQuery(query, req.query) : undefined,
    params: params ? parseParams(params, req.params) : undefined,
  });
  if (!route.memo) return parse;
  const parsedUrls = boundedLru<string, ParsedUrl>(route.memo);
  return (req) => {
    let parsed = parsedUrls.get(req.originalUrl);
    if (!parsed) {
      parsed = parse(req);
      parsedUrls.set(req.originalUrl, parsed);
    }
    return parsed;
  };
}

function handlerOf(route: Route, services: Services, routes: readonly Route[]): RequestHandler[] {
  const state = route.setup?.(services, routes);
  // The handler's database work shares the request's one deadline (db/wait-budget.ts).
  const servicesOf = requestServices(services);
  const checkScopes = laterScopes(route.auth);
  const readUrl = urlParser(route);
  const { body: bodySchema, handler } = route;
  const handle: RequestHandler = (req, res) => {
    checkScopes?.(req);
    const { query, params } = readUrl(req);
    const body = bodySchema && !(route.bodyOptional && req.body === undefined) ? parseBody(bodySchema, req.body) : undefined;
    return handler({ req, res, services: servicesOf(res), principal: req.principal, params, query, body, state });
  };
  const guard = route.admin ? [adminToken(services.config.ADMIN_TOKEN, services.failedAttempts)] : route.auth ? authMiddleware(route.auth, services) : [];
  if (bodySchema) return [...guard, requireJson, jsonBody, handle];
  // Without a body, the key's checks and the handler are one Express layer: each layer of a
  // route costs a dispatch per request, and the dropdowns, the hot path, take a key.
  return [guard.reduceRight(inOneLayer, handle)];
}

/**
 * `step` then `rest` as one handler, as if Express ran them in turn: `rest` runs when `step`
 * calls `next()` (synchronously or after an await), an error `step` passes on or throws goes to
 * the error middleware, and so does one `rest` throws or rejects with.
 */
function inOneLayer(rest: RequestHandler, step: RequestHandler): RequestHandler {
  return (req, res, next) =>
    step(req, res, (err?: unknown) => {
      if (err) return next(err);
      const done = rest(req, res, next);
      if (done instanceof Promise) done.then(undefined, (error: unknown) => next(error ?? new Error('Rejected promise')));
    });
}

const operatorApiOff: RequestHandler = () => {
  throw new AppError('not_found', 'Not found');
};

/**
 * Registers every route: the hot ones on the app itself, first; the others, in the order
 * given, on one router mounted after them; then the answer for a known path asked with a
 * method none of its routes declares.
 */
export function mountRoutes(app: Express, routes: readonly Route[], services: Services): void {
  const router = Router();
  for (const route of routes) {
    (route.hot ? app : router)[route.method](expressPath(route.path), ...handlerOf(route, services, routes));
  }
  // Without ADMIN_TOKEN the operator API does not exist: every method on every path under
  // /admin is 404, not 405 or an OPTIONS answer naming its methods (docs/keys.md).
  if (!services.config.ADMIN_TOKEN) app.use('/admin', operatorApiOff);
  app.use(router, methodNotAllowed(routes));
}

/**
 * Reached only when no route answered: every declared path pattern that matches the path
 * adds its methods (GET brings HEAD, which Express answers with the GET route), and a path
 * that matched any is a 405 `Method not allowed` with `Allow` listing them; OPTIONS gets 200
 * with the same `Allow`, as Express's router answers it on the paths it holds. A path no
 * declaration matches falls through to the 404. Matched here rather than with `router.all`,
 * so the registered routes stay exactly the documented operations.
 */
function methodNotAllowed(routes: readonly Route[]): RequestHandler {
  const byPath = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  for (const route of routes) {
    const entry = byPath.get(route.path) ?? { pattern: pathPattern(route.path), methods: new Set<string>() };
    entry.methods.add(route.method.toUpperCase());
    if (route.method === 'get') entry.methods.add('HEAD');
    byPath.set(route.path, entry);
  }
  return (req, res, next) => {
    const allowed = new Set<string>();
    for (const [path, { pattern, methods }] of byPath) {
      if (!pattern.test(req.path)) continue;
      req.routePattern ??= expressPath(path);
      for (const method of methods) allowed.add(method);
    }
    // No declaration matched, or one with this method passed the request on: not ours to answer.
    if (allowed.size === 0 || allowed.has(req.method)) return next();
    const allow = [...allowed].sort().join(', ');
    if (req.method === 'OPTIONS') return void res.set('Allow', allow).type('text/plain').send(allow);
    throw new AppError('method_not_allowed', 'Method not allowed', undefined, { Allow: allow });
  };
}

/** An OpenAPI path as Express matches it: a parameter is one segment, a trailing slash optional, any case. */
function pathPattern(path: string): RegExp {
  const parts = path.split(/\{[A-Za-z0-9_]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&'));
  return new RegExp(`^${parts.join('[^/]+')}/?$`, 'i');
}

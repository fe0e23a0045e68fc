import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { KeyHeaders, Scope } from '../auth/authenticate.js';
import type { OperationSpec } from './operation-spec.js';
import type { Services } from '../services.js';
import type { Principal } from '../sources/types.js';
import type { ParamsSchema } from './query.js';

/**
 * One endpoint, declared once: its method and path, the key it takes, the schemas of its
 * parameters and body, its answers and its handler. `http/router.ts` turns a list of these
 * into Express routes (authentication, validation, then the handler with the parsed input);
 * `openapi/operations.ts` turns the same list into the operations of the OpenAPI document.
 * The routes themselves are in `http/routes/`, one file per area (docs/architecture.md).
 */

/** The key a route takes. */
export interface RouteAuth {
  /** Which verifier judges the key: the device area's, the menu area's, or the auth test's. */
  keys: keyof Services['keys'];
  /** Where the key may be presented (docs/api.md). */
  headers: KeyHeaders;
  /**
   * The scopes the key needs. The first is checked with the key; any further one once the
   * body has been read, before it is validated (a hook needs `hooks:write`, then `device:read`
   * for the device data it delivers).
   */
  scopes: readonly Scope[];
  /**
   * Upstream mode: before the connector serves its own state (events, hooks) to the key, the
   * device upstream is asked (cached) whether it still accepts the key.
   */
  confirmDeviceKey?: boolean;
}

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** What a handler gets: the request and response, and the input already authenticated and parsed. */
export interface RouteInput<P = unknown, Q = unknown, B = unknown, A = RouteAuth | undefined, S = unknown> {
  req: Request;
  res: Response;
  services: Services;
  /** The authenticated key (routes that take one). */
  principal: A extends RouteAuth ? Principal : undefined;
  params: P;
  query: Q;
  body: B;
  /** What `setup` made for this route when the app was built. */
  state: S;
}

interface Declared extends Omit<OperationSpec, 'auth' | 'params' | 'query' | 'body'> {
  /**
   * Registered on the app itself, ahead of every other route: a nested router would add a
   * second dispatch per request (the option routes: dropdowns are the hot path).
   */
  hot?: boolean;
  /**
   * The parsed query and path parameters are memoised by the request's URL, at most this many
   * URLs: for hot routes whose clients repeat the same few URLs.
   */
  memo?: number;
}

export interface RouteDefinition<
  P extends ParamsSchema | undefined,
  Q extends ParamsSchema | undefined,
  B extends z.ZodType | undefined,
  A extends RouteAuth | undefined,
  S,
  QI,
> extends Declared {
  /** Absent: no key is read. */
  auth?: A;
  params?: P;
  query?: Q;
  /** A JSON body (`Content-Type: application/json`, at most 16 KiB). */
  body?: B;
  /** Reads the query where parsing it with `query` is not all (default: parsed with `query`). */
  readQuery?: (raw: Request['query']) => QI;
  /** Run once when the app is built, with every route of the app; its result is the handler's `state`. */
  setup?: (services: Services, routes: readonly Route[]) => S;
  handler: (input: RouteInput<Parsed<P>, QI, Parsed<B>, A, S>) => Promise<void> | void;
}

/** A route as the router and the document see it, its input types erased. */
export interface Route extends Declared {
  auth?: RouteAuth;
  params?: ParamsSchema;
  query?: ParamsSchema;
  body?: z.ZodType;
  readQuery?(raw: Request['query']): unknown;
  setup?(services: Services, routes: readonly Route[]): unknown;
  handler(input: RouteInput): Promise<void> | void;
}

/** Declares a route; the handler's input is typed from the schemas and the auth given. */
export function defineRoute<
  P extends ParamsSchema | undefined = undefined,
  Q extends ParamsSchema | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
  A extends RouteAuth | undefined = undefined,
  S = undefined,
  QI = Parsed<Q>,
>(definition: RouteDefinition<P, Q, B, A, S, QI>): Route {
  return definition as unknown as Route;
}

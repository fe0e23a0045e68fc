import type { z } from 'zod';
import type { KeyHeaders, Scope } from '../auth/authenticate.js';
import type { ParamsSchema } from './query.js';

/**
 * What a route declares of itself for the OpenAPI document (openapi/operation.ts writes it
 * out). Here in http/, which declares the routes, so http/ need not import openapi/ above it.
 */

export type Json = Record<string, unknown>;

/** One documented response: a registered schema (JSON), raw content, or none (204/304). */
export interface ResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** A literal schema for non-registered content (e.g. the OpenAPI document itself). */
  content?: { type: string; schema: Json };
  headers?: Record<string, Json>;
}

export type ErrorStatus = 400 | 401 | 403 | 404 | 409 | 413 | 415 | 429 | 502 | 503 | 504;

export interface OperationSpec {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI form, `{param}`. */
  path: string;
  operationId: string;
  tag: string;
  summary: string;
  description?: string;
  /** Which key headers the route reads and the scopes it needs; absent = no key. */
  auth?: { headers: KeyHeaders; scopes: readonly Scope[] };
  /** The operator API: `Authorization: Bearer <ADMIN_TOKEN>` instead of a key (docs/keys.md). */
  admin?: boolean;
  params?: ParamsSchema;
  query?: ParamsSchema;
  extraParameters?: Json[];
  body?: z.ZodType;
  /** The body may be left out altogether (the handler then gets undefined). */
  bodyOptional?: boolean;
  responses: Record<number, ResponseSpec>;
  /** Error statuses beyond the ones implied by auth and parameters, with what they mean. */
  errors?: Partial<Record<ErrorStatus, string>>;
}

/** What each error status means when a route says nothing more (also the hook routes' texts). */
export const defaultErrorText: Record<ErrorStatus, string> = {
  400: 'A bad parameter or body: `message` names the first, `details` lists every one.',
  401: '`Missing API key`, `Invalid API key`, `API key expired` or `API key revoked`.',
  403: '`Invalid scopes`: the key lacks the scope; `details` names it (`needs menu:read`).',
  404: 'Not found.',
  409: 'A limit was reached: `message` names it.',
  413: '`Request body is too large`.',
  415: 'An unsupported `Content-Type`, `Content-Encoding` or charset.',
  429: '`Rate limit exceeded`: the key made more requests than its limit allows (`RateLimit-Policy`); or `Too many requests`: 20 failed key attempts from this client within a minute.',
  502: '`Upstream unavailable` (upstream mode).',
  503: '`Database unavailable`: the database did not answer within `DATABASE_TIMEOUT_MS`, or cannot be reached; or `Service shutting down`: the service stopped before the request could finish. Try again after `Retry-After` seconds.',
  504: '`Upstream timeout` (upstream mode).',
};

import type { Request } from 'express';
import { z } from 'zod';
import { jsonPath } from '../dataset/parse.js';
import { validationError, type ErrorDetail } from '../errors.js';

/**
 * Building blocks for query and path parameter schemas, and the one place their problems (and
 * a JSON body's) become a 400 (docs/api.md). The same zod schemas are read by the OpenAPI
 * generator, so the output side of each (after parsing) is what the document shows: `page` is
 * an integer with its range and default, `ids` an array of strings, `is_online` a boolean.
 *
 * Query values arrive as a string, or an array of strings when a parameter is repeated (the
 * app uses the `simple` query parser). A repeated scalar is an error; lists may repeat.
 */

type Query = Request['query'];

/** One value, not repeated. */
export function scalarParam(name: string) {
  return z.string({ error: `${name} must be given once` });
}

/**
 * A decimal integer in [min, max], digits only: what the OpenAPI document's `type: integer`
 * serialises to. Surrounding spaces, signs, `1e3`, `0x10` and `1.5` are refused.
 */
export function intParam(name: string, min: number, max: number) {
  const range = max === Number.MAX_SAFE_INTEGER ? `of at least ${min}` : `from ${min} to ${max}`;
  const message = `${name} must be an integer ${range}`;
  return scalarParam(name)
    .regex(/^\d+$/, message)
    .pipe(z.coerce.number<string>({ error: message }).int(message).min(min, message).max(max, message));
}

/** Exactly `true` or `false`. */
export function boolParam(name: string) {
  return scalarParam(name)
    .pipe(z.enum(['true', 'false'], { error: `${name} must be true or false` }))
    .transform((text) => text === 'true')
    .pipe(z.boolean());
}

/** One of a closed set of strings. */
export function enumParam<const T extends readonly [string, ...string[]]>(name: string, allowed: T) {
  return scalarParam(name).pipe(z.enum(allowed, { error: `${name} must be one of ${allowed.join(', ')}` }));
}

/**
 * Comma-separated values, trimmed, possibly repeated (`?tags=a&tags=b,c`). Present but empty
 * is an error rather than "no filter", so an empty variable in a client cannot widen a query
 * to everything; so is an empty value inside the list (`a,,b`). `max` counts the values
 * given, before duplicates are dropped, as the document's `maxItems` does. `item` checks
 * each value (default: any non-blank string).
 */
export function listParam<T extends z.ZodType<string, string> = z.ZodString>(name: string, max = 1000, item?: T) {
  const count = `${name} must list 1 to ${max} comma-separated values`;
  const empty = `${name} must not contain an empty value`;
  return z
    .union([z.string(), z.array(z.string())], { error: count })
    .transform((raw) => {
      const parts = (Array.isArray(raw) ? raw : [raw]).flatMap((value) => value.split(',')).map((value) => value.trim());
      return parts.every((part) => part === '') ? [] : parts;
    })
    .pipe(
      z
        .array((item ?? z.string().min(1, empty).regex(/\S/, empty)) as T)
        .min(1, count)
        .max(max, count)
        .overwrite((values) => [...new Set(values)]),
    );
}

/** A schema over the whole query (or path parameters): an object of parameter schemas. */
export type ParamsSchema = z.ZodObject<z.ZodRawShape>;

/**
 * Parses request parameters with a schema, collecting every problem so one 400 names them
 * all: one detail per bad parameter (its first problem), the message being the first detail.
 * Parameters the schema does not name are ignored.
 */
export function parseParams<S extends ParamsSchema>(schema: S, input: Query | Record<string, unknown>): z.output<S> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  const details: ErrorDetail[] = [];
  for (const issue of parsed.error.issues) {
    const path = String(issue.path[0] ?? '');
    if (!details.some((detail) => detail.path === path)) details.push({ path, message: issue.message });
  }
  throw validationError(details);
}

/** `parseParams` for `req.query`. */
export const parseQuery = parseParams;

/** Parses a JSON body with a schema: a 400 listing every problem by its JSON path, the message being the first. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  throw validationError(parsed.error.issues.map((issue) => ({ path: jsonPath(issue.path), message: issue.message })));
}

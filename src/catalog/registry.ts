import { z } from 'zod';

/**
 * Every response body the service sends, as zod schemas registered under the names the
 * OpenAPI document gives them (`#/components/schemas/<id>`). They describe the output after
 * normalisation (an upstream's extra fields are never passed through), so objects are
 * strict, and test/integration/openapi.test.ts checks real responses against them.
 */
export const apiSchemas = z.registry<{ id: string }>();

export function component<T extends z.ZodType>(id: string, schema: T): T {
  apiSchemas.add(schema, { id });
  return schema;
}

/** The OpenAPI reference to a registered schema. */
export function schemaRef(schema: z.ZodType): { $ref: string } {
  const id = apiSchemas.get(schema)?.id;
  if (!id) throw new Error('schemaRef: the schema is not registered in apiSchemas');
  return { $ref: `#/components/schemas/${id}` };
}

/** A catalog timestamp: UTC, six fractional digits. */
export const timestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
  .meta({ format: 'date-time', description: 'UTC, always six fractional digits: `2026-06-01T12:00:00.000000Z`.' });
/** A count of records (`metadata.*.total`, `total`). */
export const count = z.number().int().min(0);

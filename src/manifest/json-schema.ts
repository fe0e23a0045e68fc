import { z } from 'zod';
import { manifestSchema } from './schema.js';

/**
 * The JSON Schema of the connector manifest, generated from the zod schema the service
 * validates manifests with (`manifests/connector.schema.json` is this, written by
 * `npm run manifest:schema`; a test fails when the two drift). Cross-field rules (path
 * parameters, template fields, references) live only in the zod refinements.
 *
 * It compiles in Ajv's strict mode without `allowUnionTypes`: zod writes a union of
 * primitives as a type array (`"type": ["string", "number"]`), which strict validators
 * refuse as ambiguous, so each becomes an `anyOf` of single types.
 */
export function manifestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(manifestSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    $id: 'https://signage-connector.local/manifests/connector.schema.json',
    title: 'Signage connector manifest',
    ...(withoutTypeArrays(schema) as Record<string, unknown>),
  };
}

/** Rewrites every `"type": [a, b]` as `"anyOf": [{"type": a}, {"type": b}]`, recursively. */
export function withoutTypeArrays(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutTypeArrays);
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = withoutTypeArrays(value);
  if (!Array.isArray(out.type)) return out;
  // Only a bare type array is rewritten; with other keywords beside it the meaning would shift.
  const { type, ...rest } = out as { type: string[] };
  if (Object.keys(rest).some((key) => key !== 'description' && key !== 'title')) {
    throw new Error(`manifest schema: cannot rewrite a type array with ${Object.keys(rest).join(', ')} beside it`);
  }
  return { ...rest, anyOf: type.map((single) => ({ type: single })) };
}

export function manifestJsonSchemaText(): string {
  return `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
}

import { z } from 'zod';
import { manifestSchema } from './schema.js';

/**
 * The JSON Schema of the connector manifest, generated from the zod schema the service
 * validates manifests with (`manifests/connector.schema.json` is this, written by
 * `npm run manifest:schema`; a test fails when the two drift). Cross-field rules (path
 * parameters, template fields, references) live only in the zod refinements.
 */
export function manifestJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(manifestSchema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  return {
    $schema: schema.$schema,
    $id: 'https://signage-connector.local/manifests/connector.schema.json',
    title: 'Signage connector manifest',
    ...schema,
  };
}

export function manifestJsonSchemaText(): string {
  return `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
}

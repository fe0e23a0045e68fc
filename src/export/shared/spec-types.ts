import { z } from 'zod';
import { operationSchema, triggerSchema } from '../../manifest/schema.js';

/**
 * The types of the manifest's parts that the exported apps' specs are built from, generated
 * from the zod schema the service validates manifests with (through its JSON Schema), so no app
 * writes them by hand: `src/export/shared/template/manifest.d.ts`, written by
 * `npm run export:shared` and copied into every app whose code is typed (Zapier's JSDoc,
 * Activepieces, n8n). The apps' own spec types (`types.d.ts`, `types.ts`) pick from these.
 */

type JsonSchema = {
  type?: string | string[];
  const?: unknown;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema | boolean;
};

const primitive: Record<string, string> = { string: 'string', integer: 'number', number: 'number', boolean: 'boolean', null: 'null' };

/** One JSON Schema node as a TypeScript type; objects are written over several lines at `indent`. */
export function typeOf(node: JsonSchema, indent = ''): string {
  if (node.const !== undefined) return JSON.stringify(node.const).replace(/"/g, "'");
  if (node.enum) return node.enum.map((value) => JSON.stringify(value).replace(/"/g, "'")).join(' | ');
  if (node.anyOf) return node.anyOf.map((member) => typeOf(member, indent)).join(' | ');
  if (Array.isArray(node.type)) return node.type.map((type) => typeOf({ ...node, type }, indent)).join(' | ');
  if (node.type === 'array') {
    const item = typeOf(node.items ?? {}, indent);
    return /[ |]/.test(item) && !item.startsWith('{') ? `Array<${item}>` : `${item}[]`;
  }
  if (node.type === 'object' && node.properties) {
    const required = new Set(node.required ?? []);
    const lines = Object.entries(node.properties).map(([key, value]) => `${indent}\t${key}${required.has(key) ? '' : '?'}: ${typeOf(value, `${indent}\t`)};`);
    return `{\n${lines.join('\n')}\n${indent}}`;
  }
  if (node.type === 'object') {
    const values = typeof node.additionalProperties === 'object' ? typeOf(node.additionalProperties, indent) : 'unknown';
    return `Record<string, ${values}>`;
  }
  if (typeof node.type === 'string' && primitive[node.type]) return primitive[node.type]!;
  return 'unknown';
}

const schemaOf = (schema: z.ZodType) => z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as JsonSchema;

/** The manifest parts the apps use, as named types: the manifest as the service reads it (defaults filled in). */
function parts(): Array<{ name: string; doc: string; schema: JsonSchema }> {
  const operation = schemaOf(operationSchema).properties!;
  const trigger = schemaOf(triggerSchema).properties!;
  return [
    { name: 'Endpoint', doc: 'One connector call: `{name}` segments of the path are filled from input values.', schema: trigger.polling! },
    { name: 'OperationRequest', doc: "An operation's request; `auth` names the header its key goes in.", schema: operation.request! },
    { name: 'OperationInput', doc: 'How one operation input reaches the request, and the dropdown that fills it.', schema: operation.inputs!.items! },
    { name: 'OperationResult', doc: "Where an operation's answer holds its records.", schema: operation.result! },
    { name: 'OperationPaging', doc: 'A page-numbered list: every page is read until the limit input is reached or the list ends.', schema: operation.paging! },
    {
      name: 'TriggerInput',
      doc: 'A trigger input: the polling query parameter and the hook body field that carry its value.',
      schema: trigger.inputFields!.items!,
    },
  ];
}

/** The text of `manifest.d.ts` (tabs: the indentation of the apps that are linted for it). */
export function specTypesText(): string {
  const declarations = parts().map(({ name, doc, schema }) => `/** ${doc} */\nexport interface ${name} ${typeOf(schema)}\n`);
  return ['// Generated from the connector manifest schema (src/manifest/schema.ts) by `npm run export:shared`; do not edit.\n', ...declarations].join('\n');
}

import { z } from 'zod';
import { optionSourceSchema, scope } from './option-source-schema.js';

export { optionSourceSchema };

/**
 * The connector manifest (`manifests/connector.json`): the platform-neutral description of
 * the connector that platforms, exporters and this service read. Option sources declared
 * here become endpoints at start; nothing about a dropdown is hard-coded in routes.
 */

const endpoint = z.strictObject({
  method: z.enum(['GET', 'POST', 'DELETE']),
  // eslint-disable-next-line no-useless-escape -- the pattern's text is published in manifests/connector.schema.json
  path: z.string().regex(/^\/[A-Za-z0-9_\/{}.-]*$/, 'must be an absolute path'),
  /** Fixed query parameters or body fields the call sends. */
  query: z.record(z.string(), z.string()).optional(),
  body: z.record(z.string(), z.unknown()).optional(),
});

const authSchema = z.strictObject({
  type: z.literal('api_key'),
  header: z.literal('X-API-Key'),
  alternativeHeader: z.string().optional(),
  test: endpoint,
  /** A field of the test call's answer that names the connection (e.g. the account). */
  connectionLabel: z.string().optional(),
  scopes: z.array(scope).min(1),
});

const fieldType = z.enum(['string', 'integer', 'number', 'boolean', 'datetime', 'object', 'array']);

const outputField = z.strictObject({
  /** Dotted path into the event, e.g. `device.name`. */
  key: z.string().min(1),
  label: z.string().min(1),
  type: fieldType,
  nullable: z.boolean().default(false),
});

const inputField = z.strictObject({
  key: z.string().regex(/^[a-z][a-z0-9_]*$/),
  label: z.string().min(1),
  helpText: z.string().optional(),
  required: z.boolean().default(false),
  list: z.boolean().default(false),
  /** The option source that fills this field's dropdown. */
  optionsFrom: z.string().optional(),
  /** How the value reaches the endpoints: polling query parameter and hook body field. */
  pollingParam: z.string().optional(),
  hookField: z.string().optional(),
});

export const triggerSchema = z.strictObject({
  id: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be snake_case'),
  title: z.string().min(1),
  description: z.string().min(1),
  eventTypes: z.array(z.enum(['device.offline', 'device.online'])).min(1),
  scope: scope,
  inputFields: z.array(inputField).default([]),
  polling: endpoint,
  hook: z.strictObject({
    subscribe: endpoint,
    unsubscribe: endpoint,
    /** Recent items for a platform's set-up screen and its "load samples". */
    list: endpoint,
    sample: endpoint,
    signature: z.literal('standard-webhooks'),
    scope: scope,
  }),
  /** The field that identifies an item: platforms dedupe on it. */
  dedupeKey: z.literal('id'),
  outputFields: z.array(outputField).min(1),
  sample: z.record(z.string(), z.unknown()),
});

/**
 * An input of an operation: where its value goes in the request, and the dropdown that fills it.
 * `optionParams` maps a path parameter of the option source to the input that supplies it
 * (`{"menuId": "menu_id"}`: the groups dropdown follows the chosen menu).
 */
const operationInput = z.strictObject({
  key: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be snake_case'),
  label: z.string().min(1),
  helpText: z.string().optional(),
  type: z.enum(['string', 'integer', 'boolean']),
  required: z.boolean().default(false),
  /** A comma-separated list of values (sent as one query parameter). */
  list: z.boolean().default(false),
  /** `path`: fills `{key}` in the request path; `query`: the query parameter `param` (default: the key). */
  in: z.enum(['path', 'query', 'paging']),
  param: z
    .string()
    .regex(/^[a-z][a-z0-9_]*$/)
    .optional(),
  default: z.union([z.string(), z.number(), z.boolean()]).optional(),
  minimum: z.number().int().optional(),
  maximum: z.number().int().optional(),
  optionsFrom: z.string().optional(),
  optionParams: z.record(z.string(), z.string()).default({}),
});

/**
 * A read operation that platforms show as an action or a search. The request names the area's
 * header (`bearer`: `Authorization: Bearer <key>`, the device area's; `api_key`: `X-API-Key`).
 * `result` says where the answer's records are: `items` is the field holding the array (absent:
 * the body is the record itself); `single` picks the one record of the array, and an empty
 * array is the 404 `notFound`. `paging` (page-numbered lists): every page is fetched until the
 * input named `limitInput` is reached or the list ends.
 */
export const operationSchema = z.strictObject({
  id: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be snake_case'),
  title: z.string().min(1),
  description: z.string().min(1),
  /** The noun of one record (Device, Menu, Group), for platforms that name searches by it. */
  noun: z.string().min(1),
  scope,
  request: z.strictObject({
    method: z.literal('GET'),
    // eslint-disable-next-line no-useless-escape -- the pattern's text is published in manifests/connector.schema.json
    path: z.string().regex(/^\/[A-Za-z0-9_\/{}.-]*$/, 'must be an absolute path'),
    auth: z.enum(['api_key', 'bearer']),
    query: z.record(z.string(), z.string()).default({}),
  }),
  inputs: z.array(operationInput).default([]),
  result: z.strictObject({
    items: z.string().optional(),
    single: z.boolean(),
    notFound: z.string().optional(),
  }),
  paging: z
    .strictObject({
      page: z.string(),
      size: z.string(),
      maxSize: z.number().int().min(1),
      total: z.string(),
      limitInput: z.string(),
    })
    .optional(),
  sample: z.record(z.string(), z.unknown()),
});

const rateLimitsSchema = z.strictObject({
  failedAuthAttemptsPerMinute: z.number().int().min(1),
  optionsCacheSeconds: z.number().int().min(0),
  deviceCacheSeconds: z.number().int().min(0),
  pollIntervalSeconds: z.number().min(0),
  description: z.string().optional(),
});

export const manifestSchema = z
  .strictObject({
    $schema: z.string().optional(),
    /**
     * Absent in the file; `GET /v1/manifest` fills it in (PUBLIC_URL, or taken from the
     * request), so a reader of the served manifest knows what every `path` is relative to.
     */
    baseUrl: z
      .string()
      .regex(/^https?:\/\/[^/?#\s]+(\/[^?#\s]*)?$/, 'must be an absolute http(s) URL without query or fragment')
      .optional()
      .describe('The absolute URL every `path` is relative to; filled in when the service serves the manifest.'),
    name: z.string().min(1),
    version: z.string().regex(/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/, 'must be a semver version'),
    description: z.string().min(1),
    auth: authSchema,
    optionSources: z.array(optionSourceSchema),
    triggers: z.array(triggerSchema).default([]),
    operations: z.array(operationSchema).default([]),
    rateLimits: rateLimitsSchema,
  })
  .superRefine((manifest, ctx) => {
    const sourceIds = new Set(manifest.optionSources.map((source) => source.id));
    const checkRef = (ref: string | undefined, path: Array<string | number>) => {
      if (ref !== undefined && !sourceIds.has(ref)) ctx.addIssue({ code: 'custom', path, message: `unknown option source "${ref}"` });
    };
    manifest.optionSources.forEach((source, i) =>
      source.params.forEach((param, j) => checkRef(param.optionsFrom, ['optionSources', i, 'params', j, 'optionsFrom'])),
    );
    manifest.triggers.forEach((trigger, i) =>
      trigger.inputFields.forEach((field, j) => checkRef(field.optionsFrom, ['triggers', i, 'inputFields', j, 'optionsFrom'])),
    );
    const triggerIds = new Set<string>();
    manifest.triggers.forEach((trigger, i) => {
      if (triggerIds.has(trigger.id)) ctx.addIssue({ code: 'custom', path: ['triggers', i, 'id'], message: `duplicate id ${trigger.id}` });
      triggerIds.add(trigger.id);
    });
    const operationIds = new Set<string>();
    manifest.operations.forEach((operation, i) => {
      const at = (...rest: Array<string | number>) => ['operations', i, ...rest];
      if (operationIds.has(operation.id)) ctx.addIssue({ code: 'custom', path: at('id'), message: `duplicate id ${operation.id}` });
      operationIds.add(operation.id);
      const keys = new Set(operation.inputs.map((input) => input.key));
      const pathParams = [...operation.request.path.matchAll(/\{([a-z0-9_]+)\}/g)].map((m) => m[1]!);
      for (const param of pathParams) {
        if (!operation.inputs.some((input) => input.key === param && input.in === 'path' && input.required)) {
          ctx.addIssue({ code: 'custom', path: at('request', 'path'), message: `{${param}} needs a required input "${param}" in the path` });
        }
      }
      operation.inputs.forEach((input, j) => {
        if (input.in === 'path' && !pathParams.includes(input.key))
          ctx.addIssue({ code: 'custom', path: at('inputs', j, 'in'), message: `the path has no {${input.key}}` });
        checkRef(input.optionsFrom, at('inputs', j, 'optionsFrom'));
        const source = manifest.optionSources.find((s) => s.id === input.optionsFrom);
        for (const [param, from] of Object.entries(input.optionParams)) {
          if (!source?.params.some((p) => p.name === param))
            ctx.addIssue({ code: 'custom', path: at('inputs', j, 'optionParams', param), message: `not a parameter of option source "${input.optionsFrom}"` });
          if (!keys.has(from)) ctx.addIssue({ code: 'custom', path: at('inputs', j, 'optionParams', param), message: `unknown input "${from}"` });
        }
        for (const param of source?.params ?? []) {
          if (!(param.name in input.optionParams))
            ctx.addIssue({ code: 'custom', path: at('inputs', j, 'optionParams'), message: `must say which input fills ${param.name}` });
        }
      });
      const limit = operation.paging?.limitInput;
      if (limit !== undefined && !operation.inputs.some((input) => input.key === limit && input.in === 'paging')) {
        ctx.addIssue({ code: 'custom', path: at('paging', 'limitInput'), message: `needs an input "${limit}" with "in": "paging"` });
      }
      operation.inputs.forEach((input, j) => {
        if (input.in === 'paging' && input.key !== limit)
          ctx.addIssue({ code: 'custom', path: at('inputs', j, 'in'), message: 'only the paging.limitInput input is "in": "paging"' });
      });
      if (operation.result.single && operation.result.items === undefined && operation.result.notFound !== undefined) {
        ctx.addIssue({ code: 'custom', path: at('result', 'notFound'), message: 'only a record picked from an array can be missing' });
      }
    });
    const seen = new Map<string, number>();
    manifest.optionSources.forEach((source, i) => {
      // Paths are compared as Express matches them: case-insensitively and whatever the
      // parameter names (`/v1/Menus/options` or `/v1/menus/{groupId}/groups/options` would be
      // unreachable behind the shipped sources). The issue points at the duplicated field.
      const route = source.path.toLowerCase().replace(/\{[^}]*\}/g, '{}');
      for (const [field, key] of [
        ['id', `id:${source.id}`],
        ['path', `path:${route}`],
      ] as const) {
        if (seen.has(key))
          ctx.addIssue({ code: 'custom', path: ['optionSources', i, field], message: `duplicate ${field} ${field === 'id' ? source.id : source.path}` });
        seen.set(key, i);
      }
    });
  });

export type Manifest = z.infer<typeof manifestSchema>;
export type OptionSource = z.infer<typeof optionSourceSchema>;
export type Trigger = z.infer<typeof triggerSchema>;
export type Operation = z.infer<typeof operationSchema>;
export type OperationInput = Operation['inputs'][number];

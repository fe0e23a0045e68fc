import { z } from 'zod';
import { resourceShapes as resources, type ResourceShape } from './resource-fields.js';
import { templateFields } from './template.js';

/** The scopes a key may hold, as the manifest names them. */
export const scope = z.enum(['device:read', 'menu:read', 'hooks:write']);

const paramSchema = z.strictObject({
  name: z.string().regex(/^[A-Za-z][A-Za-z0-9]*$/, 'must be a parameter name like menuId'),
  title: z.string().min(1),
  description: z.string().optional(),
  /** The option source whose values fill this parameter (a dependent dropdown). */
  optionsFrom: z.string().optional(),
});

export const optionSourceSchema = z
  .strictObject({
    id: z.string().regex(/^[a-z][a-z0-9_]*$/, 'must be snake_case'),
    title: z.string().min(1),
    description: z.string().optional(),
    // Ends in /options: option routes are mounted before the device and menu areas, so a
    // source at e.g. /v1/menus or /v1/hooks/{groupId} would silently take over that endpoint.
    path: z.string().regex(/^\/v1(\/([A-Za-z0-9_-]+|\{[A-Za-z][A-Za-z0-9]*\}))*\/options$/, 'must be a /v1/.../options path with {param} segments'),
    resource: z.enum(Object.keys(resources) as [string, ...string[]]),
    scope,
    params: z.array(paramSchema).default([]),
    label: z.string().min(1),
    value: z.string().min(1),
    order: z.enum(['label', 'source']),
    /** Records kept: each field must equal the given value. */
    filter: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).default({}),
    search: z.boolean().default(true),
    /** `format=tree` support: the label of a node inside the tree (the tree itself shows the path). */
    tree: z.strictObject({ label: z.string().min(1) }).optional(),
    paging: z.strictObject({ maxLimit: z.number().int().min(1).max(1000) }).default({ maxLimit: 1000 }),
  })
  .superRefine((source, ctx) => {
    const def: ResourceShape = resources[source.resource as keyof typeof resources];
    const fields = new Set(def.fields);
    const pathParams = [...source.path.matchAll(/\{([A-Za-z0-9]+)\}/g)].map((m) => m[1]!);
    for (const needed of def.params) {
      if (!pathParams.includes(needed)) ctx.addIssue({ code: 'custom', path: ['path'], message: `must contain {${needed}} for resource "${source.resource}"` });
    }
    for (const param of pathParams) {
      if (!def.params.includes(param))
        ctx.addIssue({ code: 'custom', path: ['path'], message: `{${param}} is not a parameter of resource "${source.resource}"` });
      if (!source.params.some((p) => p.name === param)) ctx.addIssue({ code: 'custom', path: ['params'], message: `must describe path parameter ${param}` });
    }
    const checkTemplate = (template: string, path: string[]) => {
      for (const field of templateFields(template)) {
        if (!fields.has(field)) ctx.addIssue({ code: 'custom', path, message: `unknown field "${field}"; ${source.resource} has ${def.fields.join(', ')}` });
      }
    };
    checkTemplate(source.label, ['label']);
    if (source.tree) checkTemplate(source.tree.label, ['tree', 'label']);
    if (!fields.has(source.value)) ctx.addIssue({ code: 'custom', path: ['value'], message: `unknown field "${source.value}"` });
    for (const field of Object.keys(source.filter)) {
      if (!fields.has(field)) ctx.addIssue({ code: 'custom', path: ['filter', field], message: `unknown field "${field}"` });
    }
    if (source.tree && !def.tree) ctx.addIssue({ code: 'custom', path: ['tree'], message: `resource "${source.resource}" is not a tree` });
    const expectedScope = def.area === 'device' ? 'device:read' : 'menu:read';
    if (source.scope !== expectedScope)
      ctx.addIssue({ code: 'custom', path: ['scope'], message: `must be ${expectedScope} for resource "${source.resource}"` });
  });

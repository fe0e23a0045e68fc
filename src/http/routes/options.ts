import { z } from 'zod';
import type { OptionSource } from '../../manifest/schema.js';
import type { Json } from '../operation-spec.js';
import { decodeCursor, matchesIfNoneMatch, type OptionFormat, type OptionQuery } from '../../options/render.js';
import { resources } from '../../options/resources.js';
import { nextPageUrl } from '../base-url.js';
import { enumParam, intParam, parseQuery, scalarParam } from '../query.js';
import { optionBodies, schemaRef } from '../responses.js';
import { defineRoute, type Route } from '../route.js';
import type { Request, Response } from 'express';
import type { Services } from '../../services.js';
import type { ServedOptions } from '../../options/service.js';

/**
 * docs/options.md: one GET endpoint per option source declared in the manifest. Responses are
 * rendered once per data version and query, with a strong ETag; `If-None-Match` gets 304.
 */

/** The formats an option source offers: `tree` only where the manifest declares one. */
function formatsOf(source: OptionSource): [OptionFormat, ...OptionFormat[]] {
  return source.tree ? ['tuples', 'objects', 'n8n', 'tree'] : ['tuples', 'objects', 'n8n'];
}

/**
 * The query of one option source. `q` exists only where the source is searchable and
 * `parent` only where it is a tree; `limit` is capped by the source's paging.
 */
function optionQuery(source: OptionSource) {
  const full = z.object({
    format: enumParam('format', formatsOf(source))
      .default('tuples')
      .describe(
        source.tree
          ? '`tuples` `[[label, value]]`, `objects` `[{label, value}]`, `n8n` `{results, paginationToken?}`, or `tree` (one level: `[[name, value, null, hasChildren]]`).'
          : '`tuples` `[[label, value]]`, `objects` `[{label, value}]` or `n8n` `{results, paginationToken?}`.',
      ),
    q: scalarParam('q')
      .max(200, 'q must be at most 200 characters')
      .optional()
      .describe('Case- and accent-insensitive substring of the label; empty = no filter.'),
    limit: intParam('limit', 1, source.paging.maxLimit)
      .optional()
      .describe('Page size. Without it the whole list is returned; with it, the next page is in the `Link` header (and `paginationToken` for n8n).'),
    cursor: scalarParam('cursor')
      .refine((cursor) => decodeCursor(cursor) !== null, 'cursor is not valid; start again without it')
      .optional()
      .describe('The opaque cursor of the next page, from the previous page.'),
    parent: scalarParam('parent').optional().describe('With `format=tree`: the group whose children to list (absent = the top level). Ignored otherwise.'),
  });
  const dropped = { ...(source.search ? {} : { q: true as const }), ...(source.tree ? {} : { parent: true as const }) };
  // Typed as the full shape: a dropped key simply never appears in the output.
  return full.omit(dropped) as unknown as typeof full;
}

/** The path parameters of one option source (e.g. `menuId`), 1 to 200 characters each. */
function optionParams(source: OptionSource) {
  const shape: Record<string, z.ZodType<string>> = {};
  for (const name of resources[source.resource]!.params) {
    const declared = source.params.find((param) => param.name === name);
    const message = `${name} must be 1 to 200 characters`;
    shape[name] = z
      .string()
      .min(1, message)
      .max(200, message)
      .describe(declared?.description ?? declared?.title ?? name);
  }
  return z.object(shape);
}

/** The query as rendering takes it. `parent` means something only with format=tree; otherwise it is not even looked at. */
function optionQueryReader(schema: ReturnType<typeof optionQuery>) {
  return (raw: Record<string, unknown>): OptionQuery => {
    const { format, q, limit, cursor, parent } = parseQuery(schema, raw.format === 'tree' ? raw : { ...raw, parent: undefined });
    const offset = cursor === undefined ? 0 : (decodeCursor(cursor) ?? 0);
    return { format, q: q || undefined, limit, offset, parent: parent || undefined };
  };
}

const optionHeaders: Record<string, Json> = {
  ETag: { description: 'Strong tag of this body; send it back as `If-None-Match`.', schema: { type: 'string' } },
  'Cache-Control': { description: '`private, max-age=<cache TTL in seconds>`.', schema: { type: 'string' } },
  'X-Total-Count': { description: 'Every match, not just this page.', schema: { type: 'integer', minimum: 0 } },
  'X-Cache': { description: '`HIT`, `MISS` or `STALE`.', schema: { type: 'string', enum: ['HIT', 'MISS', 'STALE'] } },
  Link: { description: 'With `limit`, when there is more: `<next page URL>; rel="next"`.', schema: { type: 'string' } },
};

function camel(id: string): string {
  return id.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
}

/** The route of one option source. */
export function optionRoute(source: OptionSource): Route {
  const def = resources[source.resource]!;
  const formats = formatsOf(source);
  const params = def.params;
  const querySchema = optionQuery(source);
  const notFound = params.length > 0 ? { 404: `The ${params.map((p) => `\`${p}\``).join(', ')} is unknown or not accessible (e.g. \`Menu not found\`).` } : {};
  return defineRoute({
    method: 'get',
    path: source.path,
    operationId: `${camel(source.id)}Options`,
    tag: 'Options',
    summary: `${source.title} dropdown`,
    description: [
      source.description,
      `Option source \`${source.id}\` of the manifest: label \`${source.label}\`, value \`${source.value}\`, ${source.order === 'label' ? 'sorted by label' : 'in source order'}.`,
    ]
      .filter(Boolean)
      .join(' '),
    auth: { keys: def.area, headers: def.area === 'device' ? 'either' : 'x-api-key', scopes: [source.scope] },
    params: optionParams(source),
    query: querySchema,
    readQuery: optionQueryReader(querySchema),
    // A dropdown repeats the same few URLs: their parsed parameters are kept.
    hot: true,
    memo: 1000,
    extraParameters: [
      { name: 'If-None-Match', in: 'header', required: false, description: 'An `ETag` from before: 304 when it still matches.', schema: { type: 'string' } },
    ],
    responses: {
      200: {
        description: `The options, in the requested \`format\` (${formats.join(', ')}).`,
        content: {
          type: 'application/json',
          schema: { anyOf: formats.map((format) => schemaRef(optionBodies[format])) },
        },
        headers: optionHeaders,
      },
      304: { description: 'Not modified: `If-None-Match` matches the current `ETag`.', headers: { ETag: optionHeaders.ETag! } },
    },
    errors: notFound,
    handler({ req, res, services, principal, params, query }) {
      // A warm page is answered without an await; any other is rendered first.
      const fresh = services.options.fresh(source, principal, params, query);
      if (fresh) return answer(req, res, services, fresh);
      return services.options.render(source, principal, params, query).then((served) => answer(req, res, services, served));
    },
  });
}

/** The page, with its validators and paging headers; 304 when `If-None-Match` still matches. */
function answer(req: Request, res: Response, services: Services, { rendered, state, ttlMs }: ServedOptions): void {
  const headers: Record<string, string> = {
    ETag: rendered.etag,
    'Cache-Control': `private, max-age=${Math.floor(ttlMs / 1000)}`,
    'X-Total-Count': String(rendered.total),
    'X-Cache': state,
  };
  if (rendered.nextCursor) headers.Link = `<${nextPageUrl(req, services.config.PUBLIC_URL, rendered.nextCursor)}>; rel="next"`;
  if (matchesIfNoneMatch(req.headers['if-none-match'], rendered.etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  headers['Content-Type'] = 'application/json; charset=utf-8';
  headers['Content-Length'] = String(rendered.body.length);
  res.writeHead(200, headers).end(rendered.body);
}

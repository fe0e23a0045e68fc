import { type IRouter, type Request } from 'express';
import { LRUCache } from 'lru-cache';
import type { Services } from '../services.js';
import { authenticate, principalOf } from '../auth/authenticate.js';
import { resources } from '../options/resources.js';
import { decodeCursor, matchesIfNoneMatch, type OptionQuery } from '../options/render.js';
import { nextPageUrl } from './base-url.js';
import { parseParams, parseQuery } from './query.js';
import { optionParams, optionQuery } from './schemas.js';

/**
 * docs/options.md: one GET endpoint per option source declared in the manifest. Responses are
 * rendered once per data version and query, with a strong ETag; `If-None-Match` gets 304.
 */
export function optionRoutes<R extends IRouter>(services: Services, router: R): R {
  for (const source of services.manifest.optionSources) {
    const def = resources[source.resource]!;
    const auth = authenticate({
      headers: def.area === 'device' ? 'either' : 'x-api-key',
      scope: source.scope,
      verify: services.keys[def.area],
      attempts: services.failedAttempts,
    });
    const querySchema = optionQuery(source);
    const paramsSchema = optionParams(source);
    // Parsed path parameters and queries are memoised by the raw URL: a dropdown repeats the same few.
    const parsedRequests = new LRUCache<string, { query: OptionQuery; params: Record<string, string> }>({ max: 1000 });
    router.get(source.path.replace(/\{([A-Za-z0-9]+)\}/g, ':$1'), auth, async (req, res) => {
      let parsed = parsedRequests.get(req.originalUrl);
      if (!parsed) {
        parsed = { query: readOptionQuery(req, querySchema), params: parseParams(paramsSchema, req.params) as Record<string, string> };
        parsedRequests.set(req.originalUrl, parsed);
      }
      const { query, params } = parsed;
      const { rendered, state, ttlMs } = await services.options.render(source, principalOf(req), params, query);
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
    });
  }
  return router;
}

function readOptionQuery(req: Request, schema: ReturnType<typeof optionQuery>): OptionQuery {
  // `parent` means something only with format=tree; otherwise it is not even looked at.
  const raw = req.query.format === 'tree' ? req.query : { ...req.query, parent: undefined };
  const { format, q, limit, cursor, parent } = parseQuery(schema, raw);
  const offset = cursor === undefined ? 0 : decodeCursor(cursor) ?? 0;
  return { format, q: q || undefined, limit, offset, parent: parent || undefined };
}

import { Router, type Request } from 'express';
import type { Services } from '../services.js';
import { authenticate, principalOf } from '../auth/authenticate.js';
import { validationError } from '../errors.js';
import type { OptionSource } from '../manifest/schema.js';
import { resources } from '../options/resources.js';
import { decodeCursor, matchesIfNoneMatch, renderOptions, type OptionFormat, type OptionQuery } from '../options/render.js';
import { QueryReader } from './query.js';

/**
 * CONTRACT 6.1: one GET endpoint per option source declared in the manifest. Responses are
 * rendered once per data version and query, with a strong ETag; `If-None-Match` gets 304.
 */
export function optionRoutes(services: Services): Router {
  const router = Router();
  for (const source of services.manifest.optionSources) {
    const def = resources[source.resource]!;
    const auth = authenticate({
      headers: def.area === 'device' ? 'either' : 'x-api-key',
      scope: source.scope,
      verify: services.keys[def.area],
      attempts: services.failedAttempts,
    });
    router.get(source.path.replace(/\{([A-Za-z0-9]+)\}/g, ':$1'), auth, async (req, res) => {
      const query = readOptionQuery(req, source);
      const params = readParams(req, def.params);
      const { list, state, ttlMs } = await services.options.list(source, principalOf(req), params);
      const rendered = renderOptions(list, query);
      res.setHeader('ETag', rendered.etag);
      res.setHeader('Cache-Control', `private, max-age=${Math.floor(ttlMs / 1000)}`);
      res.setHeader('X-Total-Count', String(rendered.total));
      res.setHeader('X-Cache', state);
      if (rendered.nextCursor) res.setHeader('Link', `<${nextUrl(req, services.config.PUBLIC_URL, rendered.nextCursor)}>; rel="next"`);
      if (matchesIfNoneMatch(req.headers['if-none-match'], rendered.etag)) {
        res.status(304).end();
        return;
      }
      res.setHeader('Content-Type', 'application/json; charset=utf-8');
      res.end(rendered.body);
    });
  }
  return router;
}

function readOptionQuery(req: Request, source: OptionSource): OptionQuery {
  const query = new QueryReader(req.query);
  const formats: OptionFormat[] = source.tree ? ['tuples', 'objects', 'n8n', 'tree'] : ['tuples', 'objects', 'n8n'];
  const format = query.oneOf('format', formats, 'tuples');
  const q = source.search ? query.string('q') : undefined;
  const limit = query.int('limit', 1, source.paging.maxLimit);
  const cursor = query.string('cursor');
  const parent = format === 'tree' ? query.string('parent') : undefined;
  query.done();
  const problems = [];
  if (q !== undefined && q.length > 200) problems.push({ path: 'q', message: 'q must be at most 200 characters' });
  const offset = cursor === undefined ? 0 : decodeCursor(cursor);
  if (offset === null) problems.push({ path: 'cursor', message: 'cursor is not valid; start again without it' });
  if (problems.length > 0) throw validationError(problems);
  return { format, q: q || undefined, limit, offset: offset ?? 0, parent: parent || undefined };
}

function readParams(req: Request, names: readonly string[]): Record<string, string> {
  const params: Record<string, string> = {};
  for (const name of names) {
    const value = String(req.params[name] ?? '');
    if (value.length === 0 || value.length > 200) {
      throw validationError([{ path: name, message: `${name} must be 1 to 200 characters` }]);
    }
    params[name] = value;
  }
  return params;
}

/** The same request with the next page's cursor, absolute. */
function nextUrl(req: Request, publicUrl: string | undefined, cursor: string): string {
  const base = publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
  const search = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
  search.set('cursor', cursor);
  return `${base}${req.baseUrl}${req.path}?${search.toString()}`;
}

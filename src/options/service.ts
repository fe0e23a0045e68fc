import type { CachedLoader, CacheState } from '../cache/cached-loader.js';
import type { OptionSource } from '../manifest/schema.js';
import type { Principal } from '../sources/types.js';
import { buildOptionList, optionListBytes, renderedBytes, type OptionList, type RenderedOptions } from './option-list.js';
import { resources, type ResourceSources } from './resources.js';
import { queryKey, type OptionQuery } from './render.js';
import { renderOptions } from './pager.js';
import { servedFromDatabase, type DatabaseDeviceOptions } from './database-options.js';
import { groupsServedFromDatabase, type DatabaseGroupOptions } from './database-group-options.js';

/** Embedded mode: the dropdowns the database can answer a page at a time. */
export interface DatabaseOptions {
  devices?: DatabaseDeviceOptions;
  groups?: DatabaseGroupOptions;
}

export interface ServedOptions {
  rendered: RenderedOptions;
  state: CacheState;
  ttlMs: number;
}

export interface LoadedOptions {
  list: OptionList;
  state: CacheState;
  ttlMs: number;
  /** Where the list is cached (its rendered pages are kept beside it). */
  cache: CachedLoader;
  key: string;
}

/**
 * Option lists per key and source, cached with the cache's contract (single-flight, TTL,
 * stale-while-revalidate, stale-if-error). Device lists use the device cache and its TTL,
 * everything else the options cache.
 */
export class OptionsService {
  constructor(
    private readonly sources: ResourceSources,
    private readonly caches: { menu: CachedLoader; device: CachedLoader },
    private readonly database?: DatabaseOptions,
  ) {}

  /**
   * One page of a dropdown. From the database where it can answer (each page cached like a
   * list, with its area's cache and TTL), otherwise rendered from the whole cached list.
   */
  async render(source: OptionSource, principal: Principal, params: Record<string, string>, query: OptionQuery): Promise<ServedOptions> {
    const { devices, groups } = this.database ?? {};
    const fromDatabase =
      devices && servedFromDatabase(source)
        ? () => devices.render(source, principal, query)
        : groups && groupsServedFromDatabase(source)
          ? () => groups.render(source, principal, params, query)
          : null;
    if (fromDatabase) {
      const cache = this.cacheOf(source);
      const { value, state } = await cache.get(pageKey(source, principal, params, query), async () => {
        const rendered = await fromDatabase();
        return { value: rendered, size: rendered ? renderedBytes(rendered) : 64 };
      });
      if (value) return { rendered: value, state, ttlMs: cache.ttlMs };
    }
    const { list, state, ttlMs, cache, key } = await this.list(source, principal, params);
    // Rendered pages live in the list's cache, counted in its byte bound and dropped with the list.
    const rendered = await cache.derive(key, list, queryKey(query), async () => {
      const page = await renderOptions(list, query);
      return { value: page, size: renderedBytes(page) };
    });
    return { rendered, state, ttlMs };
  }

  /**
   * The page `render` answers when it is cached and fresh, without an await (a warm dropdown,
   * the hot path); undefined when `render` must be asked.
   */
  fresh(source: OptionSource, principal: Principal, params: Record<string, string>, query: OptionQuery): ServedOptions | undefined {
    const cache = this.cacheOf(source);
    const { devices, groups } = this.database ?? {};
    if ((devices && servedFromDatabase(source)) || (groups && groupsServedFromDatabase(source))) {
      const page = cache.fresh<RenderedOptions | null>(pageKey(source, principal, params, query), (rendered) => rendered !== null);
      // A page the database did not answer (null) is rendered from the list: `render`'s to do.
      return page?.value ? { rendered: page.value, state: page.state, ttlMs: cache.ttlMs } : undefined;
    }
    const key = listKey(source, principal, params);
    let rendered: RenderedOptions | undefined;
    const list = cache.fresh<OptionList>(key, (value) => (rendered = cache.derived<RenderedOptions>(key, value, queryKey(query))) !== undefined);
    return list && rendered ? { rendered, state: list.state, ttlMs: cache.ttlMs } : undefined;
  }

  async list(source: OptionSource, principal: Principal, params: Record<string, string>): Promise<LoadedOptions> {
    const def = resources[source.resource]!;
    const cache = this.cacheOf(source);
    const key = listKey(source, principal, params);
    const { value, state } = await cache.get(key, async () => {
      const records = await def.load(this.sources, principal, params);
      const list = await buildOptionList(source, records);
      return { value: list, size: optionListBytes(list) };
    });
    return { list: value, state, ttlMs: cache.ttlMs, cache, key };
  }

  private cacheOf(source: OptionSource): CachedLoader {
    return this.caches[resources[source.resource]!.area];
  }
}

/** The source's path parameters, as a part of its cache keys. */
function paramKey(source: OptionSource, params: Record<string, string>): string {
  return resources[source.resource]!.params.map((name) => (params[name] ?? '').toLowerCase()).join('|');
}

/** Where a key's whole option list of a source is cached. */
function listKey(source: OptionSource, principal: Principal, params: Record<string, string>): string {
  return `${principal.keyHash}|${source.id}|${paramKey(source, params)}`;
}

/** Where a page the database answered is cached. */
function pageKey(source: OptionSource, principal: Principal, params: Record<string, string>, query: OptionQuery): string {
  return `${principal.keyHash}|${source.id}|page|${paramKey(source, params)}|${queryKey(query)}`;
}

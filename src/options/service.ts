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
      const def = resources[source.resource]!;
      const cache = this.caches[def.area];
      const paramKey = def.params.map((name) => (params[name] ?? '').toLowerCase()).join('|');
      const { value, state } = await cache.get(`${principal.keyHash}|${source.id}|page|${paramKey}|${queryKey(query)}`, async () => {
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

  async list(source: OptionSource, principal: Principal, params: Record<string, string>): Promise<LoadedOptions> {
    const def = resources[source.resource]!;
    const cache = this.caches[def.area];
    const paramKey = def.params.map((name) => (params[name] ?? '').toLowerCase()).join('|');
    const key = `${principal.keyHash}|${source.id}|${paramKey}`;
    const { value, state } = await cache.get(key, async () => {
      const records = await def.load(this.sources, principal, params);
      const list = await buildOptionList(source, records);
      return { value: list, size: optionListBytes(list) };
    });
    return { list: value, state, ttlMs: cache.ttlMs, cache, key };
  }
}

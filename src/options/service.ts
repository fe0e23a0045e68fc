import type { CachedLoader, CacheState } from '../cache/cached-loader.js';
import type { OptionSource } from '../manifest/schema.js';
import type { Principal } from '../sources/types.js';
import { buildOptionList, type OptionList } from './option-list.js';
import { resources, type ResourceSources } from './resources.js';

export interface LoadedOptions {
  list: OptionList;
  state: CacheState;
  ttlMs: number;
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
  ) {}

  async list(source: OptionSource, principal: Principal, params: Record<string, string>): Promise<LoadedOptions> {
    const def = resources[source.resource]!;
    const cache = this.caches[def.area];
    const paramKey = def.params.map((name) => (params[name] ?? '').toLowerCase()).join('|');
    const { value, state } = await cache.get(`${principal.keyHash}|${source.id}|${paramKey}`, async () => {
      const records = await def.load(this.sources, principal, params);
      const list = await buildOptionList(source, records);
      return { value: list, size: 64 + list.entries.reduce((n, e) => n + 2 * (e.label.length + e.value.length) + 48, 0) };
    });
    return { list: value, state, ttlMs: cache.ttlMs };
  }
}

import { setImmediate } from 'node:timers/promises';
import { boundedLru } from '../cache/bounded-lru.js';
import type { OptionSource } from '../manifest/schema.js';
import type { Principal } from '../sources/types.js';
import type { DeviceOptionKey, DeviceOptionRow, DeviceOptionStore } from '../sources/embedded-device-options.js';
import type { OptionEntry, RenderedOptions } from './option-list.js';
import { pageOfOptions, type OptionPager } from './pager.js';
import type { OptionQuery } from './render.js';

/**
 * Device dropdowns of the embedded catalog answered by the database (docs/options.md, "Big
 * accounts"): the count, the search and the page come from the index, a page at a time, so a
 * cold first page costs the same for 100 devices or 100,000. The answer is byte for byte the
 * one the in-memory list gives for the same data (both go through options/pager.ts).
 *
 * Served this way: a `devices` source whose label is the device name (`{name}` or
 * `{name|…}`), whose value is `id`, without filters, in either order. Everything else, and a
 * user with a device whose name has no sort key (src/text/label-order.ts), is built in memory.
 */
const nameLabel = /^\{name(\|[^{}]*)?\}$/;

export function servedFromDatabase(source: OptionSource): boolean {
  return source.resource === 'devices' && nameLabel.test(source.label) && source.value === 'id' && Object.keys(source.filter).length === 0;
}

/** Rows read per statement; the event loop gets a turn before each. */
const rowsPerRead = 1000;

function entry(row: DeviceOptionRow): OptionEntry {
  return { label: row.name, value: row.id, folded: '', treeLabel: row.name, parent: null, hasChildren: false };
}

/** One user's devices in the source's order, from the index: a place is a row's key in that order. */
function devicePager(store: DeviceOptionStore, userId: string | null, source: OptionSource): OptionPager<DeviceOptionKey> {
  return {
    pageLimit: rowsPerRead,
    // Devices are no tree: the tree format is not offered for them.
    findParent: async () => null,
    count: (scope) => store.count(userId, scope.needle),
    async page(scope, { after, offset, limit }) {
      // SQLite answers synchronously: other requests run between two reads.
      await setImmediate();
      const rows = await store.page(userId, { order: source.order, needle: scope.needle, after, offset, limit });
      return { entries: rows.map(entry), last: rows[rows.length - 1]?.key };
    },
  };
}

export class DatabaseDeviceOptions {
  private readonly continuations = boundedLru<string, DeviceOptionKey>(10_000);

  constructor(private readonly store: DeviceOptionStore) {}

  /** The page, or null when this user's devices must be ordered in memory. */
  async render(source: OptionSource, principal: Principal, query: OptionQuery): Promise<RenderedOptions | null> {
    if (!(await this.store.covered(principal.userId))) return null;
    const needle = query.q ?? '';
    return pageOfOptions(devicePager(this.store, principal.userId, source), query, {
      places: this.continuations,
      key: (offset) => `${principal.keyHash}|${source.id}|${needle}|${offset}`,
    });
  }
}

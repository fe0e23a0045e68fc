import { setImmediate } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import type { OptionSource } from '../manifest/schema.js';
import type { Principal } from '../sources/types.js';
import type { DeviceOptionKey, DeviceOptionRow, DeviceOptionStore } from '../sources/embedded-device-options.js';
import { fold } from '../text/label-order.js';
import type { OptionEntry, RenderedOptions } from './option-list.js';
import { pageEnd, renderPage, type OptionQuery } from './render.js';

/**
 * Device dropdowns of the embedded catalog answered by the database (docs/options.md, "Big
 * accounts"): the count, the search and the page come from the index, a page at a time, so a
 * cold first page costs the same for 100 devices or 100,000. The answer is byte for byte the
 * one the in-memory list gives for the same data.
 *
 * Served this way: a `devices` source whose label is the device name (`{name}` or
 * `{name|…}`), whose value is `id`, without filters, in either order. Everything else, and a
 * user with a device whose name has no sort key (src/text/label-order.ts), is built in memory.
 */
const nameLabel = /^\{name(\|[^{}]*)?\}$/;

export function servedFromDatabase(source: OptionSource): boolean {
  return source.resource === 'devices' && nameLabel.test(source.label) && source.value === 'id' && Object.keys(source.filter).length === 0;
}

/** Rows read per statement; the event loop gets a turn between two. */
const rowsPerRead = 1000;

function entry(row: DeviceOptionRow): OptionEntry {
  return { label: row.name, value: row.id, folded: '', treeLabel: row.name, parent: null, hasChildren: false };
}

export class DatabaseDeviceOptions {
  /**
   * Cursors stay offsets (their format is the list's), so the row a page ended on is kept by
   * the offset its next cursor names: the next page starts after it (keyset). A cursor this
   * replica did not hand out (or forgot) is served by skipping rows of the index instead.
   */
  private readonly continuations = new LRUCache<string, DeviceOptionKey>({ max: 10_000 });

  constructor(private readonly store: DeviceOptionStore) {}

  /** The page, or null when this user's devices must be ordered in memory. */
  async render(source: OptionSource, principal: Principal, query: OptionQuery): Promise<RenderedOptions | null> {
    const userId = principal.userId;
    if (!(await this.store.covered(userId))) return null;
    const needle = query.q === undefined ? undefined : fold(query.q);
    const total = await this.store.count(userId, needle);
    const end = pageEnd(query, total);
    const at = (offset: number) => `${principal.keyHash}|${source.id}|${needle ?? ''}|${offset}`;
    let after = query.offset > 0 ? this.continuations.get(at(query.offset)) : undefined;
    let skip = after ? 0 : query.offset;
    const page: OptionEntry[] = [];
    while (page.length < end - query.offset) {
      // SQLite answers synchronously: other requests run between two reads.
      await setImmediate();
      const rows = await this.store.page(userId, { order: source.order, needle, after, offset: skip, limit: Math.min(rowsPerRead, end - query.offset - page.length) });
      if (rows.length === 0) break;
      for (const row of rows) page.push(entry(row));
      after = rows[rows.length - 1]!.key;
      skip = 0;
    }
    if (after && end < total) this.continuations.set(at(end), after);
    return renderPage(query, page, total);
  }
}

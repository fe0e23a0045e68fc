import { LRUCache } from 'lru-cache';
import type { OptionSource } from '../manifest/schema.js';
import type { OptionRecord } from './resources.js';
import { mapCooperatively, sortCooperatively } from './cooperative.js';
import { compileTemplate } from './template.js';
import { fold, labelCollator as collator } from './label-order.js';

export interface OptionEntry {
  label: string;
  value: string;
  /** The label folded for search: lower case, accents removed. */
  folded: string;
  /** Tree sources: the node's own label, its parent's value (null at the top), children. */
  treeLabel: string;
  parent: string | null;
  hasChildren: boolean;
}

/** One built list of options for one key and source; rendered pages are memoised on it. */
export interface OptionList {
  entries: OptionEntry[];
  /** Rendered responses by normalised query; dies with the list when the data refreshes. */
  rendered: LRUCache<string, RenderedOptions>;
}

export interface RenderedOptions {
  body: Buffer;
  etag: string;
  total: number;
  nextCursor: string | null;
}

export { fold };

/**
 * Records → entries: filter, label, value and order as the manifest declares them. Yields to
 * the event loop between slices, so a list of 100,000 devices never stalls other requests.
 */
export async function buildOptionList(source: OptionSource, records: readonly OptionRecord[]): Promise<OptionList> {
  const label = compileTemplate(source.label);
  const treeLabel = compileTemplate(source.tree?.label ?? source.label);
  const filters = Object.entries(source.filter);
  const kept = filters.length === 0 ? records : records.filter((record) => filters.every(([field, expected]) => record[field] === expected));
  const entries = await mapCooperatively(kept, (record): OptionEntry => {
      const text = label(record);
      return {
        label: text,
        value: String(record[source.value]),
        folded: fold(text),
        treeLabel: treeLabel(record),
        parent: record.parent ?? null,
        hasChildren: record.hasChildren ?? false,
      };
    });
  if (source.order === 'label') await sortCooperatively(entries, (a, b) => collator.compare(a.label, b.label) || collator.compare(a.value, b.value));
  return { entries, rendered: new LRUCache({ max: 64 }) };
}

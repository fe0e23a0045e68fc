import type { OptionSource } from '../manifest/schema.js';
import type { OptionRecord } from './resources.js';
import { mapCooperatively, sortCooperatively } from './cooperative.js';
import { compileTemplate } from '../manifest/template.js';
import { fold, labelCollator as collator } from '../text/label-order.js';

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

/** One built list of options for one key and source (its rendered pages are cached beside it, see service.ts). */
export interface OptionList {
  entries: OptionEntry[];
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
  return { entries };
}

/**
 * What an entry holds beyond its characters: four or five string headers, the object and its
 * slot in the array. Strings are counted at two bytes a character, as V8 stores any text beyond
 * Latin-1; measured on Node 20, 100,000 device entries hold 148 bytes each and are estimated at
 * 243 (docs/options.md, "Memory and the event loop"): the estimate errs on the side of the bound.
 */
const entryOverhead = 128;

/**
 * Bytes a list holds, for its cache's byte bound: every string of every entry (label, value,
 * folded label, tree label, parent) at two bytes a character, plus each entry's overhead.
 */
export function optionListBytes(list: OptionList): number {
  let bytes = 64;
  for (const e of list.entries) bytes += 2 * (e.label.length + e.value.length + e.folded.length + e.treeLabel.length + (e.parent?.length ?? 0)) + entryOverhead;
  return bytes;
}

/** Bytes a rendered page holds: its body, its tag and cursor, the object and its cache key. */
export function renderedBytes(rendered: RenderedOptions): number {
  return rendered.body.length + 2 * (rendered.etag.length + (rendered.nextCursor?.length ?? 0)) + 256;
}

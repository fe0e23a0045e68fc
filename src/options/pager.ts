import type { LRUCache } from 'lru-cache';
import { AppError } from '../errors.js';
import { fold } from '../text/label-order.js';
import { filterCooperatively } from './cooperative.js';
import type { OptionEntry, OptionList, RenderedOptions } from './option-list.js';
import { pageEnd, renderPage, type OptionQuery } from './render.js';

/**
 * One pager behind every dropdown (docs/options.md, "Paging"): wherever a dropdown's entries
 * are held (a database index of devices, a menu's group rows, or a list in memory) they answer
 * the same three questions for a query, and `pageOfOptions` turns the answers into the page
 * the same way for all; so the ways of serving a dropdown differ only in where entries are read.
 */
export interface OptionScope {
  /** Tree format: the stored id of the group whose children are listed (null: the top level); undefined: every entry. */
  parent?: string | null;
  /** Folded `q`: entries whose folded label (tree format: folded tree label) contains it. */
  needle?: string;
  tree: boolean;
}

export interface OptionPager<Place extends NonNullable<unknown>> {
  /** Tree format: the stored id of the entry `parent` names (ids compare case-insensitively), or null. */
  findParent(parent: string): Promise<string | null>;
  count(scope: OptionScope): Promise<number>;
  /**
   * Up to `limit` entries of the scope in order, after `after` (an earlier page's place) or else
   * skipping `offset`, and the place of the last of them.
   */
  page(scope: OptionScope, at: { after?: Place; offset: number; limit: number }): Promise<{ entries: readonly OptionEntry[]; last?: Place }>;
  /** The most entries one `page` call reads (a database statement's rows); unbounded when absent. */
  readonly pageLimit?: number;
}

/**
 * Where the next page of a scope starts, by the cursor handed out for it: cursors stay offsets
 * (their format is the list's), so the place a page ended on is kept under `key(offset)` and the
 * next page starts after it (keyset). A cursor this replica did not hand out, or forgot, is
 * served by skipping entries instead.
 */
export interface Continuations<Place extends NonNullable<unknown>> {
  places: LRUCache<string, Place>;
  key(offset: number): string;
}

const invalidParent = () =>
  new AppError('validation', 'parent must be the id of a group of this menu', [{ path: 'parent', message: 'parent must be the id of a group of this menu' }]);

/** The page of `query`: count, read the entries after the cursor's place, render. */
export async function pageOfOptions<Place extends NonNullable<unknown>>(
  pager: OptionPager<Place>,
  query: OptionQuery,
  continuations?: Continuations<Place>,
): Promise<RenderedOptions> {
  const tree = query.format === 'tree';
  let parent: string | null | undefined;
  if (tree) {
    parent = query.parent === undefined ? null : await pager.findParent(query.parent);
    if (parent === null && query.parent !== undefined) throw invalidParent();
  }
  const scope: OptionScope = { parent, needle: query.q ? fold(query.q) : undefined, tree };
  const total = await pager.count(scope);
  const end = pageEnd(query, total);
  let after = query.offset > 0 ? continuations?.places.get(continuations.key(query.offset)) : undefined;
  let offset = after === undefined ? query.offset : 0;
  const page: OptionEntry[] = [];
  while (page.length < end - query.offset) {
    const want = end - query.offset - page.length;
    const read = await pager.page(scope, { after, offset, limit: Math.min(pager.pageLimit ?? want, want) });
    if (read.entries.length === 0) break;
    for (const entry of read.entries) page.push(entry);
    after = read.last;
    offset = 0;
  }
  if (continuations && after !== undefined && end < total) continuations.places.set(continuations.key(end), after);
  return renderPage(query, page, total);
}

/**
 * The pager of a list built in memory (upstream mode, and what the database cannot order). A
 * place is an index among the scope's matches, which are found once per scope (a pager serves
 * one query), a slice at a time for long lists.
 */
export function listPager(list: OptionList): OptionPager<number> {
  let found: { scope: OptionScope; matches: readonly OptionEntry[] } | undefined;
  const matches = async (scope: OptionScope) => {
    if (found?.scope === scope) return found.matches;
    let entries: readonly OptionEntry[] = list.entries;
    if (scope.parent !== undefined) entries = await filterCooperatively(entries, (e) => e.parent === scope.parent);
    const needle = scope.needle;
    if (needle) entries = await filterCooperatively(entries, (e) => (scope.tree ? fold(e.treeLabel) : e.folded).includes(needle));
    found = { scope, matches: entries };
    return entries;
  };
  return {
    async findParent(parent) {
      const wanted = parent.toLowerCase();
      return list.entries.find((e) => e.value.toLowerCase() === wanted)?.value ?? null;
    },
    async count(scope) {
      return (await matches(scope)).length;
    },
    async page(scope, { after, offset, limit }) {
      const all = await matches(scope);
      const start = after === undefined ? offset : after + 1;
      const entries = all.slice(start, start + limit);
      return { entries, last: start + entries.length - 1 };
    },
  };
}

/** One page of a list built in memory for a query (the list's rendered pages are cached beside it, service.ts). */
export function renderOptions(list: OptionList, query: OptionQuery): Promise<RenderedOptions> {
  return pageOfOptions(listPager(list), query);
}

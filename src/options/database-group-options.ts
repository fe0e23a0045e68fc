import { setImmediate } from 'node:timers/promises';
import { LRUCache } from 'lru-cache';
import { AppError } from '../errors.js';
import type { OptionSource } from '../manifest/schema.js';
import type { Principal } from '../sources/types.js';
import type { GroupLabelField, GroupOptionRow, GroupOptionStore } from '../sources/embedded-group-options.js';
import { fold } from '../text/label-order.js';
import type { OptionEntry, RenderedOptions } from './option-list.js';
import { pageEnd, renderPage, type OptionQuery } from './render.js';

/**
 * Group dropdowns of the embedded catalog answered by the database (docs/options.md, "Big
 * accounts"), the way device dropdowns are: the count, the search, the tree level and the page
 * come from one menu's index, so a cold first page of a menu with 20,000 groups reads 100 rows.
 * The answer is byte for byte the one the in-memory list gives for the same data.
 *
 * Served this way: a `groups` source in `source` order, without filters, whose value is `id`
 * and whose label and tree label are each `{path}` or `{name}`. Anything else is built in memory.
 */
const fieldOf = (template: string): GroupLabelField | null => (template === '{path}' ? 'path' : template === '{name}' ? 'name' : null);

export function groupsServedFromDatabase(source: OptionSource): boolean {
  return (
    source.resource === 'groups' &&
    source.order === 'source' &&
    source.value === 'id' &&
    Object.keys(source.filter).length === 0 &&
    fieldOf(source.label) !== null &&
    fieldOf(source.tree?.label ?? source.label) !== null
  );
}

/** Rows read per statement; the event loop gets a turn between two. */
const rowsPerRead = 1000;

export class DatabaseGroupOptions {
  /** The position a page ended on, by the cursor handed out for the next page (keyset). */
  private readonly continuations = new LRUCache<string, number>({ max: 10_000 });

  constructor(private readonly store: GroupOptionStore) {}

  async render(source: OptionSource, principal: Principal, params: Record<string, string>, query: OptionQuery): Promise<RenderedOptions> {
    const label = fieldOf(source.label)!;
    const treeLabel = fieldOf(source.tree?.label ?? source.label)!;
    const menuId = await this.store.menu(principal.accountId, params.menuId ?? '');
    if (menuId === null) throw new AppError('not_found', 'Menu not found');
    const tree = query.format === 'tree';
    let parent: string | null | undefined;
    if (tree) {
      parent = query.parent === undefined ? null : await this.store.group(menuId, query.parent);
      if (parent === null && query.parent !== undefined) {
        throw new AppError('validation', 'parent must be the id of a group of this menu', [
          { path: 'parent', message: 'parent must be the id of a group of this menu' },
        ]);
      }
    }
    const scope = { menuId, parent, needle: query.q ? fold(query.q) : undefined, field: tree ? treeLabel : label };
    const total = await this.store.count(scope);
    const end = pageEnd(query, total);
    const at = (offset: number) => `${principal.keyHash}|${source.id}|${menuId}|${query.format}|${parent ?? ''}|${scope.needle ?? ''}|${offset}`;
    let afterPosition = query.offset > 0 ? this.continuations.get(at(query.offset)) : undefined;
    let skip = afterPosition === undefined ? query.offset : 0;
    const page: OptionEntry[] = [];
    while (page.length < end - query.offset) {
      // SQLite answers synchronously: other requests run between two reads.
      await setImmediate();
      const rows = await this.store.page(scope, { afterPosition, offset: skip, limit: Math.min(rowsPerRead, end - query.offset - page.length) });
      if (rows.length === 0) break;
      for (const row of rows) page.push(entry(row, label, treeLabel));
      afterPosition = rows[rows.length - 1]!.position;
      skip = 0;
    }
    if (afterPosition !== undefined && end < total) this.continuations.set(at(end), afterPosition);
    return renderPage(query, page, total);
  }
}

function entry(row: GroupOptionRow, label: GroupLabelField, treeLabel: GroupLabelField): OptionEntry {
  return { label: row[label], value: row.id, folded: '', treeLabel: row[treeLabel], parent: row.parentId, hasChildren: row.hasChildren };
}

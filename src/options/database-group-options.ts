import { setImmediate } from 'node:timers/promises';
import { boundedLru } from '../cache/bounded-lru.js';
import { AppError } from '../errors.js';
import type { OptionSource } from '../manifest/schema.js';
import type { Principal } from '../sources/types.js';
import type { GroupLabelField, GroupOptionRow, GroupOptionStore } from '../sources/embedded-group-options.js';
import type { OptionEntry, RenderedOptions } from './option-list.js';
import { pageOfOptions, type OptionPager } from './pager.js';
import type { OptionQuery } from './render.js';

/**
 * Group dropdowns of the embedded catalog answered by the database (docs/options.md, "Big
 * accounts"), the way device dropdowns are: the count, the search, the tree level and the page
 * come from one menu's index, so a cold first page of a menu with 20,000 groups reads 100 rows.
 * The answer is byte for byte the one the in-memory list gives for the same data (both go
 * through options/pager.ts).
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

/** Rows read per statement; the event loop gets a turn before each. */
const rowsPerRead = 1000;

/** One menu's groups in source order, from its rows: a place is a row's position. */
function groupPager(store: GroupOptionStore, menuId: string, source: OptionSource): OptionPager<number> {
  const label = fieldOf(source.label)!;
  const treeLabel = fieldOf(source.tree?.label ?? source.label)!;
  const entry = (row: GroupOptionRow): OptionEntry => ({
    label: row[label],
    value: row.id,
    folded: '',
    treeLabel: row[treeLabel],
    parent: row.parentId,
    hasChildren: row.hasChildren,
  });
  const rows = ({ parent, needle, tree }: { parent?: string | null; needle?: string; tree: boolean }) => ({
    menuId,
    parent,
    needle,
    field: tree ? treeLabel : label,
  });
  return {
    pageLimit: rowsPerRead,
    findParent: (parent) => store.group(menuId, parent),
    count: (scope) => store.count(rows(scope)),
    async page(scope, { after, offset, limit }) {
      // SQLite answers synchronously: other requests run between two reads.
      await setImmediate();
      const found = await store.page(rows(scope), { afterPosition: after, offset, limit });
      return { entries: found.map(entry), last: found[found.length - 1]?.position };
    },
  };
}

export class DatabaseGroupOptions {
  private readonly continuations = boundedLru<string, number>(10_000);

  constructor(private readonly store: GroupOptionStore) {}

  async render(source: OptionSource, principal: Principal, params: Record<string, string>, query: OptionQuery): Promise<RenderedOptions> {
    const menuId = await this.store.menu(principal.accountId, params.menuId ?? '');
    if (menuId === null) throw new AppError('not_found', 'Menu not found');
    return pageOfOptions(groupPager(this.store, menuId, source), query, {
      places: this.continuations,
      key: (offset) => `${principal.keyHash}|${source.id}|${menuId}|${query.format}|${query.parent ?? ''}|${query.q ?? ''}|${offset}`,
    });
  }
}

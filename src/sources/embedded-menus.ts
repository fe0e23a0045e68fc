import { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.js';
import { selectGroups } from '../menus/group-filter.js';
import type { Group, GroupFilter, Menu, MenuSource, MenuTree, Principal } from './types.js';

interface MenuRow {
  id: string;
  name: string;
  description: string | null;
  tags: string;
  revision: number;
}

/** Stored JSON of the parsed group trees kept in memory, at most (their objects take a few times more). */
const treeBytes = 16 * 1024 * 1024;

/**
 * Menus from the embedded catalog: a key sees the menus of its account. Parsed group trees
 * are memoised per (menu id, revision), so a re-import is seen at once and an unchanged menu
 * is rarely parsed twice; the memo is bounded by the size of the JSON it parsed (least recently
 * used first), so it does not grow with the number or size of menus. Group dropdowns do not
 * parse trees at all: they read `menu_groups` (options/database-group-options.ts).
 */
export function embeddedMenuSource(db: Db, trees = menuTreeMemo()): MenuSource {
  const groupsOf = async (row: MenuRow): Promise<Group[]> => {
    const cached = trees.get(row.id);
    if (cached && cached.revision === row.revision) return cached.groups;
    const stored = await db.kysely.selectFrom('menus').select(['groups_json', 'revision']).where('id', '=', row.id).executeTakeFirst();
    const groups = stored ? (JSON.parse(stored.groups_json) as Group[]) : [];
    if (stored && stored.groups_json.length <= treeBytes) trees.set(row.id, { revision: Number(stored.revision), groups, size: stored.groups_json.length });
    return groups;
  };

  const menuTrees = async (principal: Principal): Promise<MenuTree[]> => {
    const rows = await db.kysely
      .selectFrom('menus')
      .select(['id', 'name', 'description', 'tags', 'revision'])
      .where('account_id', '=', principal.accountId ?? '')
      .orderBy('position')
      .orderBy('id')
      .execute();
    return Promise.all(
      rows.map(async (row) => {
        const groups = await groupsOf({ ...row, revision: Number(row.revision) });
        return {
          id: row.id,
          name: row.name,
          description: row.description,
          tags: JSON.parse(row.tags) as string[],
          metadata: { groups: { total: groups.length } },
          groups,
        };
      }),
    );
  };

  return {
    mode: 'embedded',
    async listMenus(principal: Principal): Promise<Menu[]> {
      return (await menuTrees(principal)).map(({ groups: _groups, ...menu }) => menu);
    },
    async groups(principal: Principal, filter: GroupFilter): Promise<Group[]> {
      return selectGroups(await menuTrees(principal), filter);
    },
    // The same memo of parsed trees, whichever request reads them.
    within: (waits) => embeddedMenuSource(db.within(waits), trees),
  };
}

function menuTreeMemo() {
  return new LRUCache<string, { revision: number; groups: Group[]; size: number }>({
    maxSize: treeBytes,
    sizeCalculation: (tree) => Math.max(1, tree.size),
  });
}

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

/**
 * Menus from the embedded catalog: a key sees the menus of its account. Parsed group trees
 * are memoised per (menu id, revision), so a re-import is seen at once and an unchanged menu
 * is never parsed twice.
 */
export function embeddedMenuSource(db: Db): MenuSource {
  const listRows = db.prepare(
    'SELECT id, name, description, tags, revision FROM menus WHERE account_id = ? ORDER BY position, id',
  );
  const treeOf = db.prepare('SELECT groups_json FROM menus WHERE id = ?').pluck();
  const trees = new Map<string, { revision: number; groups: Group[] }>();

  const groupsOf = (row: MenuRow): Group[] => {
    const cached = trees.get(row.id);
    if (cached && cached.revision === row.revision) return cached.groups;
    const groups = JSON.parse(treeOf.get(row.id) as string) as Group[];
    trees.set(row.id, { revision: row.revision, groups });
    return groups;
  };

  const menuTrees = (principal: Principal): MenuTree[] =>
    (listRows.all(principal.accountId) as MenuRow[]).map((row) => {
      const groups = groupsOf(row);
      return {
        id: row.id,
        name: row.name,
        description: row.description,
        tags: JSON.parse(row.tags) as string[],
        metadata: { groups: { total: groups.length } },
        groups,
      };
    });

  return {
    mode: 'embedded',
    async listMenus(principal: Principal): Promise<Menu[]> {
      return menuTrees(principal).map(({ groups: _groups, ...menu }) => menu);
    },
    async groups(principal: Principal, filter: GroupFilter): Promise<Group[]> {
      return selectGroups(menuTrees(principal), filter);
    },
  };
}

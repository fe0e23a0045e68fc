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
  const trees = new Map<string, { revision: number; groups: Group[] }>();

  const groupsOf = async (row: MenuRow): Promise<Group[]> => {
    const cached = trees.get(row.id);
    if (cached && cached.revision === row.revision) return cached.groups;
    const stored = await db.kysely.selectFrom('menus').select(['groups_json', 'revision']).where('id', '=', row.id).executeTakeFirst();
    const groups = stored ? (JSON.parse(stored.groups_json) as Group[]) : [];
    if (stored) trees.set(row.id, { revision: Number(stored.revision), groups });
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
  };
}

import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { containsText } from '../db/dialect.js';

/**
 * Group dropdown pages straight from the embedded catalog (docs/options.md, "Big accounts"):
 * `menu_groups` holds every group of a menu in its depth-first source order with its label's
 * parts, so a page, a search and a count read one menu's index, never the whole tree.
 */

/** Which stored text a label (or `q`) uses: the group's path or its own name. */
export type GroupLabelField = 'path' | 'name';

export interface GroupOptionRow {
  id: string;
  name: string;
  path: string;
  parentId: string | null;
  hasChildren: boolean;
  position: number;
}

export interface GroupOptionScope {
  menuId: string;
  /** `undefined`: the groups at every depth; `null`: the top level; else the children of that group. */
  parent?: string | null;
  /** Folded `q`, matched against the folded form of `field`. */
  needle?: string;
  field: GroupLabelField;
}

export interface GroupOptionStore {
  /** The stored id of the menu of the account (ids compare case-insensitively), or null. */
  menu(accountId: string | null, menuId: string): Promise<string | null>;
  /** The stored id of a group of the menu, or null. */
  group(menuId: string, groupId: string): Promise<string | null>;
  count(scope: GroupOptionScope): Promise<number>;
  /** In source order, after the row at `afterPosition` or else skipping `offset` rows. */
  page(scope: GroupOptionScope, at: { afterPosition?: number; offset: number; limit: number }): Promise<GroupOptionRow[]>;
}

export function embeddedGroupOptions(db: Db): GroupOptionStore {
  const rows = ({ menuId, parent, needle, field }: GroupOptionScope) =>
    db.kysely
      .selectFrom('menu_groups as g')
      .where('g.menu_id', '=', menuId)
      .$if(parent === null, (q) => q.where('g.parent_id', 'is', null))
      .$if(typeof parent === 'string', (q) => q.where('g.parent_id', '=', parent!))
      .$if(needle !== undefined, (q) => q.where(containsText(db.engine, field === 'path' ? 'g.folded_path' : 'g.folded_name', needle!)));

  return {
    async menu(accountId, menuId) {
      const menus = await db.kysely
        .selectFrom('menus')
        .select('id')
        .where('account_id', '=', accountId ?? '')
        .execute();
      const wanted = menuId.toLowerCase();
      return menus.find((m) => m.id.toLowerCase() === wanted)?.id ?? null;
    },

    async group(menuId, groupId) {
      const found = await db.kysely
        .selectFrom('menu_groups')
        .select('id')
        .where('menu_id', '=', menuId)
        .where(sql<string>`lower(id)`, '=', groupId.toLowerCase())
        .orderBy('position')
        .limit(1)
        .executeTakeFirst();
      return found?.id ?? null;
    },

    async count(scope) {
      const row = await rows(scope)
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total);
    },

    async page(scope, { afterPosition, offset, limit }) {
      const found = await rows(scope)
        .select(['g.id', 'g.name', 'g.path', 'g.parent_id', 'g.has_children', 'g.position'])
        .$if(afterPosition !== undefined, (q) => q.where('g.position', '>', afterPosition!))
        .orderBy('g.position')
        .limit(limit)
        .$if(afterPosition === undefined && offset > 0, (q) => q.offset(offset))
        .execute();
      return found.map((r) => ({
        id: r.id,
        name: r.name,
        path: r.path,
        parentId: r.parent_id,
        hasChildren: Number(r.has_children) === 1,
        position: Number(r.position),
      }));
    },
  };
}

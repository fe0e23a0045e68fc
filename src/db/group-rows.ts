import type { Tables } from './tables.js';
import { fold } from '../text/label-order.js';

/** Between the names of a group's path in its label (Drinks › Hot drinks). */
export const pathSeparator = ' › ';

/** What the group dropdown needs of a stored group tree. */
export interface GroupNode {
  id: string;
  name: string;
  groups: readonly GroupNode[];
}

/** One group of a menu as the database serves its dropdown (docs/options.md, "Big accounts"): its
 * `position` is the menu's depth-first source order, the dropdown's `source` order. */
export type MenuGroupRow = Tables['menu_groups'];

/**
 * A menu's groups at every depth, depth first in source order, the way the in-memory dropdown
 * lists them. Walks with a stack, not recursion, whatever the depth.
 */
export function menuGroupRows(menuId: string, groups: readonly GroupNode[]): MenuGroupRow[] {
  const rows: MenuGroupRow[] = [];
  const stack: Array<{ group: GroupNode; parent: string | null; prefix: string }> = [];
  const push = (children: readonly GroupNode[], parent: string | null, prefix: string) => {
    for (let i = children.length - 1; i >= 0; i--) stack.push({ group: children[i]!, parent, prefix });
  };
  push(groups, null, '');
  while (stack.length > 0) {
    const { group, parent, prefix } = stack.pop()!;
    const path = prefix ? `${prefix}${pathSeparator}${group.name}` : group.name;
    rows.push({
      menu_id: menuId,
      position: rows.length,
      id: group.id,
      parent_id: parent,
      name: group.name,
      path,
      has_children: group.groups.length > 0 ? 1 : 0,
      folded_path: fold(path),
      folded_name: fold(group.name),
    });
    push(group.groups, group.id, path);
  }
  return rows;
}

import type { Tables } from './tables.js';
import { fold } from '../text/label-order.js';
import { flattenTree } from '../text/tree-paths.js';

/** What the group dropdown needs of a stored group tree. */
export interface GroupNode {
  id: string;
  name: string;
  groups: readonly GroupNode[];
}

/** One group of a menu as the database serves its dropdown (docs/options.md, "Big accounts"): its
 * `position` is the menu's depth-first source order, the dropdown's `source` order. */
export type MenuGroupRow = Tables['menu_groups'];

/** A menu's groups at every depth, depth first in source order, the way the in-memory dropdown lists them. */
export function menuGroupRows(menuId: string, groups: readonly GroupNode[]): MenuGroupRow[] {
  return flattenTree(groups, (g) => ({ id: g.id, name: g.name, children: g.groups })).map(({ node, parentId, path, hasChildren }, position) => ({
    menu_id: menuId,
    position,
    id: node.id,
    parent_id: parentId,
    name: node.name,
    path,
    has_children: hasChildren ? 1 : 0,
    folded_path: fold(path),
    folded_name: fold(node.name),
  }));
}

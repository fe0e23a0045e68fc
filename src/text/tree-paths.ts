/** Between the names of a node's path in its label (Drinks › Hot drinks). */
export const pathSeparator = ' › ';

/** A node of a tree as its path labels see it: its id, its name and its children. */
export interface TreeNode<N> {
  id: string;
  name: string;
  children: readonly N[];
}

/** One node of a flattened tree, with what its dropdown entry needs. */
export interface TreeRow<N> {
  node: N;
  /** The id of the node's parent; null at the top. */
  parentId: string | null;
  /** The names from the top to this node, joined by `pathSeparator`. */
  path: string;
  /** 0 at the top. */
  depth: number;
  hasChildren: boolean;
}

/**
 * A tree's nodes depth first, in source order, each with its path from the top: the one walk
 * behind every tree-shaped dropdown (a menu's groups in the database and in memory, a group's
 * items). Walks with a stack, not recursion, whatever the depth.
 */
export function flattenTree<N>(roots: readonly N[], view: (node: N) => TreeNode<N>): Array<TreeRow<N>> {
  const rows: Array<TreeRow<N>> = [];
  const stack: Array<{ node: N; parentId: string | null; prefix: string; depth: number }> = [];
  const push = (children: readonly N[], parentId: string | null, prefix: string, depth: number) => {
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i]!, parentId, prefix, depth });
  };
  push(roots, null, '', 0);
  while (stack.length > 0) {
    const { node, parentId, prefix, depth } = stack.pop()!;
    const { id, name, children } = view(node);
    const path = prefix ? `${prefix}${pathSeparator}${name}` : name;
    rows.push({ node, parentId, path, depth, hasChildren: children.length > 0 });
    push(children, id, path, depth + 1);
  }
  return rows;
}

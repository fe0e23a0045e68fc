/**
 * How deep menus may nest (docs/datasets.md): groups inside groups at most 32 levels, items
 * inside items at most 8. Checked before any schema walks the tree, without recursion, so a
 * tree nested 100,000 deep is an error naming its JSON path, never a stack overflow; and every
 * later recursive walk (validation, path labels, filters) is bounded by these depths.
 */
export const nestingLimits = { groups: 32, items: 8 } as const;

export interface NestingIssue {
  path: Array<string | number>;
  message: string;
}

interface Visit {
  node: unknown;
  path: Array<string | number>;
  groupDepth: number;
  itemDepth: number;
}

const childrenOf = (node: unknown, field: string): unknown[] => {
  const value = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[field] : undefined;
  return Array.isArray(value) ? value : [];
};

/**
 * The first place where `groups` (an array of groups, at `path`) nests past a limit, or null.
 * Whatever is not an object or array is left to the schema that follows.
 */
export function groupNestingIssue(groups: unknown, path: Array<string | number>): NestingIssue | null {
  const stack: Visit[] = [];
  const push = (nodes: unknown[], at: Array<string | number>, field: 'groups' | 'items', groupDepth: number, itemDepth: number) => {
    for (let i = nodes.length - 1; i >= 0; i--) stack.push({ node: nodes[i], path: [...at, field, i], groupDepth, itemDepth });
  };
  if (!Array.isArray(groups)) return null;
  for (let i = groups.length - 1; i >= 0; i--) stack.push({ node: groups[i], path: [...path, i], groupDepth: 1, itemDepth: 0 });
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    if (visit.groupDepth > nestingLimits.groups) {
      return { path: visit.path, message: `groups nest more than ${nestingLimits.groups} levels deep here (the limit is ${nestingLimits.groups})` };
    }
    if (visit.itemDepth > nestingLimits.items) {
      return { path: visit.path, message: `items nest more than ${nestingLimits.items} levels deep here (the limit is ${nestingLimits.items})` };
    }
    if (visit.itemDepth === 0) {
      push(childrenOf(visit.node, 'groups'), visit.path, 'groups', visit.groupDepth + 1, 0);
      push(childrenOf(visit.node, 'items'), visit.path, 'items', visit.groupDepth, 1);
    } else {
      push(childrenOf(visit.node, 'items'), visit.path, 'items', visit.groupDepth, visit.itemDepth + 1);
    }
  }
  return null;
}

/** Every menu of a dataset document whose groups nest too deep (one issue per menu at most). */
export function datasetNestingIssues(document: unknown): NestingIssue[] {
  const menus = childrenOf(document, 'menus');
  const issues: NestingIssue[] = [];
  menus.forEach((menu, i) => {
    const issue = groupNestingIssue(childrenOf(menu, 'groups'), ['menus', i, 'groups']);
    if (issue) issues.push(issue);
  });
  return issues;
}

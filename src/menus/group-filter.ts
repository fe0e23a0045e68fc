import type { Group } from '../catalog/menu.js';
import type { GroupFilter, MenuTree } from '../catalog/source-queries.js';

/**
 * docs/menus.md, `GET /v1/groups`, as a pure function over the menus a key may access.
 * - no `groups`/`tags` filter: the top-level groups of the (optionally `menus`-narrowed) menus;
 * - otherwise every matching group at any depth, depth first in source order, returned with
 *   its whole subtree; a match inside an already returned subtree is not repeated.
 * Values of one filter are OR-ed, different filters AND-ed; a tag `key:*` matches every tag
 * starting with `key:`. Ids compare case-insensitively, tags exactly.
 */
export function selectGroups(menus: readonly MenuTree[], filter: GroupFilter): Group[] {
  const menuIds = filter.menus && new Set(filter.menus.map((id) => id.toLowerCase()));
  const scoped = menuIds ? menus.filter((menu) => menuIds.has(menu.id.toLowerCase())) : menus;
  const matches = groupMatcher(filter);
  if (!matches) return scoped.flatMap((menu) => menu.groups);
  const found: Group[] = [];
  const visit = (groups: readonly Group[]): void => {
    for (const group of groups) {
      if (matches(group)) found.push(group);
      else visit(group.groups);
    }
  };
  for (const menu of scoped) visit(menu.groups);
  return found;
}

function groupMatcher(filter: GroupFilter): ((group: Group) => boolean) | null {
  const tests: Array<(group: Group) => boolean> = [];
  if (filter.groups) {
    const ids = new Set(filter.groups.map((id) => id.toLowerCase()));
    tests.push((group) => ids.has(group.id.toLowerCase()));
  }
  if (filter.tags) {
    const matchTag = tagMatcher(filter.tags);
    tests.push((group) => group.tags.some(matchTag));
  }
  if (tests.length === 0) return null;
  return (group) => tests.every((test) => test(group));
}

/** `key:*` is a prefix pattern; anything else matches a tag exactly. */
export function tagMatcher(patterns: readonly string[]): (tag: string) => boolean {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const pattern of patterns) {
    if (pattern.endsWith(':*')) prefixes.push(pattern.slice(0, -1));
    else exact.add(pattern);
  }
  return (tag) => exact.has(tag) || prefixes.some((prefix) => tag.startsWith(prefix));
}

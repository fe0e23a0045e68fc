import { describe, expect, test } from '@jest/globals';
import { selectGroups, tagMatcher } from '../../src/menus/group-filter.js';
import { toGroup } from '../../src/dataset/import.js';
import type { Group, GroupFilter, MenuTree } from '../../src/sources/types.js';
import { catalog, groupIds, menuIds } from '../fixtures/catalog.js';

/**
 * docs/menus.md, `GET /v1/groups`, as the pure function `selectGroups` over the menus a key may
 * access. The trees are the fixture catalog's, turned into the stored shape by the importer's
 * own `toGroup`, so these tests see exactly what the embedded source hands the filter.
 */

type MenuInput = ReturnType<typeof catalog>['menus'][number];

function treeOf(menu: MenuInput): MenuTree {
  const groups = menu.groups.map((g) => toGroup(g as Parameters<typeof toGroup>[0]));
  return {
    id: menu.id,
    name: menu.name,
    description: menu.description,
    tags: menu.tags,
    metadata: { groups: { total: groups.length } },
    groups,
  };
}

/** What a key of the `acc_harbor` account may access: All day, then Breakfast. */
function harborMenus(): MenuTree[] {
  return catalog()
    .menus.filter((m) => m.account_id === 'acc_harbor')
    .map(treeOf);
}

const ids = (groups: readonly Group[]): string[] => groups.map((g) => g.id);
const select = (filter: GroupFilter): string[] => ids(selectGroups(harborMenus(), filter));

/** A small hand-built group, for trees whose shape a test wants to control. */
function group(id: string, tags: string[] = [], groups: Group[] = []): Group {
  return {
    metadata: { groups: { total: groups.length }, items: { total: 0 } },
    id,
    name: id,
    description: null,
    tags,
    groups,
    items: [],
  };
}

function menu(id: string, groups: Group[]): MenuTree {
  return { id, name: id, description: null, tags: [], metadata: { groups: { total: groups.length } }, groups };
}

describe('selectGroups: no group or tag filter', () => {
  test('no filter: the top-level groups of every menu, menus and groups in source order', () => {
    expect(select({})).toEqual([groupIds.drinks, groupIds.burgers, groupIds.eggs, groupIds.pastries]);
  });

  test('top-level groups come back whole, with their subtrees', () => {
    const [drinks] = selectGroups(harborMenus(), {});
    expect(drinks!.groups.map((g) => g.id)).toEqual([groupIds.hot]);
    expect(drinks!.groups[0]!.groups.map((g) => g.id)).toEqual([groupIds.espresso]);
    expect(drinks!.items.map((i) => i.name)).toEqual(['Lemonade']);
  });

  test('menus only: the top-level groups of those menus', () => {
    expect(select({ menus: [menuIds.breakfast] })).toEqual([groupIds.eggs, groupIds.pastries]);
    expect(select({ menus: [menuIds.allDay] })).toEqual([groupIds.drinks, groupIds.burgers]);
  });

  test('menus: several values are OR-ed and the result keeps source order, not filter order', () => {
    expect(select({ menus: [menuIds.breakfast, menuIds.allDay] })).toEqual([groupIds.drinks, groupIds.burgers, groupIds.eggs, groupIds.pastries]);
  });

  test('menus: ids compare case-insensitively', () => {
    expect(select({ menus: [menuIds.allDay.toUpperCase()] })).toEqual([groupIds.drinks, groupIds.burgers]);
  });

  test('menus: an unknown menu id gives an empty list; known ids beside it still count', () => {
    expect(select({ menus: ['no-such-menu'] })).toEqual([]);
    expect(select({ menus: ['no-such-menu', menuIds.breakfast] })).toEqual([groupIds.eggs, groupIds.pastries]);
  });

  test('menus: a menu outside the accessible list behaves as absent', () => {
    expect(select({ menus: [menuIds.otherAccount] })).toEqual([]);
  });

  test('a menu with no groups contributes nothing', () => {
    const menus = [menu('empty', []), ...harborMenus()];
    expect(ids(selectGroups(menus, {}))).toEqual([groupIds.drinks, groupIds.burgers, groupIds.eggs, groupIds.pastries]);
    expect(ids(selectGroups(menus, { menus: ['empty'] }))).toEqual([]);
  });

  test('no menus at all: empty for every filter', () => {
    expect(selectGroups([], {})).toEqual([]);
    expect(selectGroups([], { groups: [groupIds.drinks] })).toEqual([]);
    expect(selectGroups([], { tags: ['daypart:*'] })).toEqual([]);
  });
});

describe('selectGroups: groups filter', () => {
  test('matches a top-level group', () => {
    expect(select({ groups: [groupIds.burgers] })).toEqual([groupIds.burgers]);
  });

  test('matches at depth 2 and depth 3, each returned as a top-level entry with its whole subtree', () => {
    const hot = selectGroups(harborMenus(), { groups: [groupIds.hot] });
    expect(ids(hot)).toEqual([groupIds.hot]);
    expect(ids(hot[0]!.groups)).toEqual([groupIds.espresso]);
    expect(hot[0]!.items.map((i) => i.name)).toEqual(['Latte']);
    expect(hot[0]!.items[0]!.items.map((i) => i.name)).toEqual(['Latte, 12 oz', 'Latte, 16 oz']);

    const espresso = selectGroups(harborMenus(), { groups: [groupIds.espresso] });
    expect(ids(espresso)).toEqual([groupIds.espresso]);
    expect(espresso[0]!.name).toBe('Espresso');
    expect(espresso[0]!.items.map((i) => i.name)).toEqual(['Double shot']);
  });

  test('the returned subtree is the stored one, unchanged', () => {
    const menus = harborMenus();
    const stored = menus[0]!.groups[0]!.groups[0]!; // Hot drinks
    const [found] = selectGroups(menus, { groups: [groupIds.hot] });
    expect(found).toEqual(stored);
  });

  test('several ids are OR-ed; results keep source order (depth first), not filter order', () => {
    expect(select({ groups: [groupIds.pastries, groupIds.espresso, groupIds.burgers] })).toEqual([groupIds.espresso, groupIds.burgers, groupIds.pastries]);
  });

  test('a match inside an already returned subtree is not repeated', () => {
    expect(select({ groups: [groupIds.drinks, groupIds.hot, groupIds.espresso] })).toEqual([groupIds.drinks]);
    expect(select({ groups: [groupIds.espresso, groupIds.hot] })).toEqual([groupIds.hot]);
  });

  test('ids compare case-insensitively', () => {
    expect(select({ groups: [groupIds.espresso.toUpperCase()] })).toEqual([groupIds.espresso]);
  });

  test('an unknown or inaccessible group id matches nothing', () => {
    expect(select({ groups: ['00000000-0000-4000-8000-000000000000'] })).toEqual([]);
    expect(select({ groups: [groupIds.other] })).toEqual([]);
  });

  test('depth-first pre-order across siblings at different depths', () => {
    // a ─ a1 ─ a11      b ─ b1
    //   └ a2
    const menus = [menu('m', [group('a', [], [group('a1', ['x'], [group('a11', ['x'])]), group('a2', ['x'])]), group('b', [], [group('b1', ['x'])])])];
    expect(ids(selectGroups(menus, { groups: ['b1', 'a11', 'a2'] }))).toEqual(['a11', 'a2', 'b1']);
    expect(ids(selectGroups(menus, { tags: ['x'] }))).toEqual(['a1', 'a2', 'b1']);
  });
});

describe('selectGroups: tags filter', () => {
  test('exact tag match, at any depth', () => {
    expect(select({ tags: ['daypart:lunch'] })).toEqual([groupIds.burgers]);
    expect(select({ tags: ['caffeine'] })).toEqual([groupIds.espresso]);
  });

  test('exact means exact: no substring, prefix or case-folded match', () => {
    expect(select({ tags: ['caffeine-free'] })).toEqual([groupIds.pastries]);
    expect(select({ tags: ['daypart'] })).toEqual([]);
    expect(select({ tags: ['daypart:'] })).toEqual([]);
    expect(select({ tags: ['Daypart:lunch'] })).toEqual([]);
    expect(select({ tags: ['lunch'] })).toEqual([]);
  });

  test('item tags do not make their group match', () => {
    // Latte (an item of Hot drinks) is tagged `caffeine`; Hot drinks itself is not.
    expect(select({ tags: ['caffeine'] })).not.toContain(groupIds.hot);
  });

  test('key:* matches every tag starting with key:', () => {
    expect(select({ tags: ['temperature:*'] })).toEqual([groupIds.hot]);
    expect(select({ tags: ['daypart:*'] })).toEqual([groupIds.drinks, groupIds.burgers, groupIds.eggs]);
  });

  test('key:* does not match the bare key or a longer key', () => {
    const menus = [menu('m', [group('a', ['temperature']), group('b', ['temperatures:hot']), group('c', ['temperature:'])])];
    expect(ids(selectGroups(menus, { tags: ['temperature:*'] }))).toEqual(['c']);
  });

  test('several values are OR-ed, exact and prefix mixed, in source order', () => {
    expect(select({ tags: ['daypart:breakfast', 'daypart:lunch'] })).toEqual([groupIds.burgers, groupIds.eggs]);
    expect(select({ tags: ['caffeine-free', 'temperature:*'] })).toEqual([groupIds.hot, groupIds.pastries]);
  });

  test('a match inside an already returned subtree is not repeated', () => {
    // Drinks (daypart:all) contains Hot drinks and Espresso (temperature:hot).
    expect(select({ tags: ['daypart:all', 'temperature:hot'] })).toEqual([groupIds.drinks]);
    // Hot drinks contains Espresso; both are temperature:hot.
    expect(select({ tags: ['temperature:hot'] })).toEqual([groupIds.hot]);
  });

  test('tags of another account do not match', () => {
    // The other account's "Other drinks" is temperature:hot, but is not accessible.
    expect(select({ tags: ['temperature:hot'] })).not.toContain(groupIds.other);
  });
});

describe('selectGroups: different filters are AND-ed', () => {
  test('groups + tags: a group must be listed and carry the tag', () => {
    expect(select({ groups: [groupIds.drinks, groupIds.burgers], tags: ['daypart:lunch'] })).toEqual([groupIds.burgers]);
    expect(select({ groups: [groupIds.hot, groupIds.espresso], tags: ['caffeine'] })).toEqual([groupIds.espresso]);
  });

  test('groups + tags: a listed group without the tag is not returned, nor a tagged child that is not listed', () => {
    // Hot drinks lacks `caffeine`; its child Espresso has it but is not listed.
    expect(select({ groups: [groupIds.hot], tags: ['caffeine'] })).toEqual([]);
  });

  test('menus + tags narrows the search to those menus', () => {
    expect(select({ menus: [menuIds.breakfast], tags: ['daypart:*'] })).toEqual([groupIds.eggs]);
    expect(select({ menus: [menuIds.allDay], tags: ['daypart:*'] })).toEqual([groupIds.drinks, groupIds.burgers]);
    expect(select({ menus: [menuIds.allDay], tags: ['caffeine-free'] })).toEqual([]);
  });

  test('menus + groups narrows the search to those menus', () => {
    expect(select({ menus: [menuIds.breakfast], groups: [groupIds.espresso] })).toEqual([]);
    expect(select({ menus: [menuIds.allDay], groups: [groupIds.espresso] })).toEqual([groupIds.espresso]);
  });

  test('all three together', () => {
    expect(select({ menus: [menuIds.allDay, menuIds.breakfast], groups: [groupIds.espresso, groupIds.eggs], tags: ['caffeine'] })).toEqual([groupIds.espresso]);
  });
});

describe('selectGroups: purity', () => {
  test('does not change its input', () => {
    const menus = harborMenus();
    const before = JSON.stringify(menus);
    selectGroups(menus, { tags: ['daypart:*'] });
    selectGroups(menus, { groups: [groupIds.espresso], menus: [menuIds.allDay] });
    selectGroups(menus, {});
    expect(JSON.stringify(menus)).toBe(before);
  });

  test('an empty filter list matches nothing rather than widening to everything', () => {
    expect(select({ menus: [] })).toEqual([]);
    expect(select({ groups: [] })).toEqual([]);
    expect(select({ tags: [] })).toEqual([]);
  });
});

describe('tagMatcher', () => {
  test('exact patterns', () => {
    const m = tagMatcher(['caffeine', 'daypart:lunch']);
    expect(m('caffeine')).toBe(true);
    expect(m('daypart:lunch')).toBe(true);
    expect(m('caffeine-free')).toBe(false);
    expect(m('Caffeine')).toBe(false);
    expect(m('daypart:lunc')).toBe(false);
    expect(m('daypart:lunch ')).toBe(false);
  });

  test('key:* is a prefix pattern on key:', () => {
    const m = tagMatcher(['daypart:*']);
    expect(m('daypart:lunch')).toBe(true);
    expect(m('daypart:')).toBe(true);
    expect(m('daypart:all:day')).toBe(true);
    expect(m('daypart')).toBe(false);
    expect(m('dayparts:lunch')).toBe(false);
    expect(m('x-daypart:lunch')).toBe(false);
    expect(m('Daypart:lunch')).toBe(false);
  });

  test('a * anywhere but after a final colon is literal', () => {
    const m = tagMatcher(['day*', '*']);
    expect(m('day*')).toBe(true);
    expect(m('*')).toBe(true);
    expect(m('daypart:lunch')).toBe(false);
    expect(m('anything')).toBe(false);
  });

  test('patterns are OR-ed', () => {
    const m = tagMatcher(['temperature:*', 'caffeine']);
    expect(m('temperature:iced')).toBe(true);
    expect(m('caffeine')).toBe(true);
    expect(m('daypart:all')).toBe(false);
  });

  test('no patterns match nothing', () => {
    expect(tagMatcher([])('anything')).toBe(false);
  });
});

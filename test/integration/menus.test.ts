import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, groupIds, keys, menuIds } from '../fixtures/catalog.js';
import { importDataset } from '../../src/dataset/import.js';

/**
 * The menu area (docs/menus.md, docs/api.md) over HTTP, against the embedded
 * source loaded with the fixture catalog.
 */

const GROUP_KEYS = ['metadata', 'id', 'name', 'description', 'tags', 'groups', 'items'];
const ITEM_KEYS = ['metadata', 'id', 'name', 'description', 'price', 'calories', 'tags', 'inStock', 'items'];
const MENU_KEYS = ['id', 'name', 'description', 'tags', 'metadata'];

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Walks a whole response and checks that every `metadata.<name>.total` equals the length of
 * the sibling array `<name>`. Returns the problems found and how many totals were checked, so
 * a test can also see that the walk went deep.
 */
function totalsReport(root: unknown): { checked: number; problems: string[] } {
  const problems: string[] = [];
  let checked = 0;
  const walk = (node: unknown, path: string): void => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => walk(child, `${path}[${i}]`));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const record = node as Record<string, unknown>;
    const metadata = record.metadata;
    if (metadata !== undefined) {
      if (metadata === null || typeof metadata !== 'object' || Array.isArray(metadata)) {
        problems.push(`${path}.metadata is not an object`);
      } else {
        for (const [name, counter] of Object.entries(metadata as Record<string, unknown>)) {
          const total = (counter as { total?: unknown } | null)?.total;
          const list = record[name];
          checked += 1;
          if (!Number.isInteger(total)) problems.push(`${path}.metadata.${name}.total is not an integer`);
          else if (!Array.isArray(list)) problems.push(`${path}.${name} is not an array`);
          else if (list.length !== total) problems.push(`${path}.metadata.${name}.total is ${total}, ${name} has ${list.length}`);
        }
      }
    }
    for (const [name, value] of Object.entries(record)) if (name !== 'metadata') walk(value, `${path}.${name}`);
  };
  walk(root, '$');
  return { checked, problems };
}

/** Every total in the tree is consistent; returns how many were checked. */
function expectConsistentTotals(body: unknown): number {
  const report = totalsReport(body);
  expect(report.problems).toEqual([]);
  return report.checked;
}

/** docs/menus.md, key order included, recursively. */
function expectItemShape(item: Json, path: string): void {
  expect({ path, keys: Object.keys(item) }).toEqual({ path, keys: ITEM_KEYS });
  expect({ path, keys: Object.keys(item.metadata) }).toEqual({ path, keys: ['items'] });
  expect({ path, keys: Object.keys(item.metadata.items) }).toEqual({ path, keys: ['total'] });
  expect(typeof item.id).toBe('string');
  expect(typeof item.name).toBe('string');
  expect(item.description === null || typeof item.description === 'string').toBe(true);
  expect(item.price === null || typeof item.price === 'number').toBe(true);
  expect(item.calories === null || typeof item.calories === 'number').toBe(true);
  expect(Array.isArray(item.tags) && item.tags.every((t: unknown) => typeof t === 'string')).toBe(true);
  expect(typeof item.inStock).toBe('boolean');
  expect(Array.isArray(item.items)).toBe(true);
  item.items.forEach((child: Json, i: number) => expectItemShape(child, `${path}.items[${i}]`));
}

/** docs/menus.md, key order included, recursively. */
function expectGroupShape(group: Json, path: string): void {
  expect({ path, keys: Object.keys(group) }).toEqual({ path, keys: GROUP_KEYS });
  expect({ path, keys: Object.keys(group.metadata) }).toEqual({ path, keys: ['groups', 'items'] });
  expect({ path, keys: Object.keys(group.metadata.groups) }).toEqual({ path, keys: ['total'] });
  expect({ path, keys: Object.keys(group.metadata.items) }).toEqual({ path, keys: ['total'] });
  expect(typeof group.id).toBe('string');
  expect(typeof group.name).toBe('string');
  expect(group.description === null || typeof group.description === 'string').toBe(true);
  expect(Array.isArray(group.tags) && group.tags.every((t: unknown) => typeof t === 'string')).toBe(true);
  expect(Array.isArray(group.groups)).toBe(true);
  expect(Array.isArray(group.items)).toBe(true);
  group.groups.forEach((child: Json, i: number) => expectGroupShape(child, `${path}.groups[${i}]`));
  group.items.forEach((item: Json, i: number) => expectItemShape(item, `${path}.items[${i}]`));
}

/** docs/menus.md envelope, every group and item below it, and every total. */
function expectGroupsEnvelope(body: Json): void {
  expect(Object.keys(body)).toEqual(['metadata', 'groups']);
  expect(body.metadata).toEqual({ groups: { total: body.groups.length } });
  body.groups.forEach((group: Json, i: number) => expectGroupShape(group, `$.groups[${i}]`));
  expectConsistentTotals(body);
}

/** Every group id in a response, depth first. */
function allGroupIds(groups: Json[]): string[] {
  return groups.flatMap((g) => [g.id, ...allGroupIds(g.groups)]);
}

// The fixture's trees in the exact output shape (docs/menus.md, key order as documented).
const item = (id: string, name: string, extra: Record<string, unknown> = {}) => {
  const base = { id, name, description: null, price: 4.25, calories: 190, tags: [], inStock: true, items: [] as Json[], ...extra };
  return {
    metadata: { items: { total: base.items.length } },
    id: base.id,
    name: base.name,
    description: base.description,
    price: base.price,
    calories: base.calories,
    tags: base.tags,
    inStock: base.inStock,
    items: base.items,
  };
};
const espressoTree = {
  metadata: { groups: { total: 0 }, items: { total: 1 } },
  id: groupIds.espresso,
  name: 'Espresso',
  description: null,
  tags: ['temperature:hot', 'caffeine'],
  groups: [],
  items: [item('aaaaaaaa-0000-4000-8000-000000000001', 'Double shot', { price: null, calories: null })],
};
const hotTree = {
  metadata: { groups: { total: 1 }, items: { total: 1 } },
  id: groupIds.hot,
  name: 'Hot drinks',
  description: 'Locally roasted',
  tags: ['temperature:hot'],
  groups: [espressoTree],
  items: [
    item('aaaaaaaa-0000-4000-8000-000000000002', 'Latte', {
      tags: ['caffeine'],
      items: [
        item('aaaaaaaa-0000-4000-8000-000000000003', 'Latte, 12 oz'),
        item('aaaaaaaa-0000-4000-8000-000000000004', 'Latte, 16 oz', { price: 4.95, inStock: false }),
      ],
    }),
  ],
};
const drinksTree = {
  metadata: { groups: { total: 1 }, items: { total: 1 } },
  id: groupIds.drinks,
  name: 'Drinks',
  description: null,
  tags: ['daypart:all'],
  groups: [hotTree],
  items: [item('aaaaaaaa-0000-4000-8000-000000000005', 'Lemonade', { description: 'Fresh', calories: null })],
};
const envelope = (groups: unknown[]) => ({ metadata: { groups: { total: groups.length } }, groups });

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog() });
});
afterAll(async () => t.close());

const get = (path: string, key: string | null = keys.ana) => {
  const req = request(t.app).get(path);
  return key === null ? req : req.set('X-API-Key', key);
};

/** GET /v1/groups with a raw query string; asserts 200 and a well-formed body; returns top-level ids. */
async function groupIdsFor(query: string, key: string = keys.ana): Promise<string[]> {
  const res = await get(`/v1/groups${query ? `?${query}` : ''}`, key).expect(200);
  expectGroupsEnvelope(res.body);
  return res.body.groups.map((g: Json) => g.id);
}

describe('GET /v1/menus', () => {
  test("lists the menus of the key's account in source order, exactly in the shape of docs/menus.md", async () => {
    const res = await get('/v1/menus')
      .expect(200)
      .expect('Content-Type', /application\/json/);
    const expected = {
      metadata: { menus: { total: 2 } },
      menus: [
        {
          id: menuIds.allDay,
          name: 'All day',
          description: 'Served 7am to close',
          tags: ['daypart:all'],
          metadata: { groups: { total: 2 } },
        },
        { id: menuIds.breakfast, name: 'Breakfast', description: null, tags: [], metadata: { groups: { total: 2 } } },
      ],
    };
    expect(res.body).toEqual(expected);
    // Same bytes as the expected object: key order of the envelope and of each menu included.
    expect(res.text).toBe(JSON.stringify(expected));
  });

  test('every menu has exactly the five fields, and no group tree', async () => {
    const res = await get('/v1/menus').expect(200);
    expect(Object.keys(res.body)).toEqual(['metadata', 'menus']);
    for (const menu of res.body.menus) {
      expect(Object.keys(menu)).toEqual(MENU_KEYS);
      expect(Object.keys(menu.metadata)).toEqual(['groups']);
      expect(Object.keys(menu.metadata.groups)).toEqual(['total']);
    }
  });

  test('metadata.menus.total equals the number of menus', async () => {
    for (const key of [keys.ana, keys.zoe]) {
      const res = await get('/v1/menus', key).expect(200);
      expect(res.body.metadata.menus.total).toBe(res.body.menus.length);
    }
  });

  test("each menu's groups.total is its number of top-level groups", async () => {
    const res = await get('/v1/menus').expect(200);
    for (const menu of res.body.menus) {
      const groups = await get(`/v1/groups?menus=${menu.id}`).expect(200);
      expect(menu.metadata.groups.total).toBe(groups.body.groups.length);
    }
  });

  test("every key of the account sees the account's menus, whatever its user", async () => {
    const expected = [menuIds.allDay, menuIds.breakfast];
    for (const key of [keys.ana, keys.anaMenuOnly, keys.ben]) {
      const res = await get('/v1/menus', key).expect(200);
      expect(res.body.menus.map((m: Json) => m.id)).toEqual(expected);
    }
  });

  test('another account sees only its own menus', async () => {
    const res = await get('/v1/menus', keys.zoe).expect(200);
    expect(res.body).toEqual({
      metadata: { menus: { total: 1 } },
      menus: [{ id: menuIds.otherAccount, name: 'Other menu', description: null, tags: [], metadata: { groups: { total: 1 } } }],
    });
  });

  test('unknown query parameters are ignored', async () => {
    const plain = await get('/v1/menus').expect(200);
    const withJunk = await get('/v1/menus?foo=bar&page=-1&tags=x').expect(200);
    expect(withJunk.body).toEqual(plain.body);
  });
});

describe('GET /v1/groups: no filter and menus', () => {
  test('no filter: the top-level groups of every accessible menu, in source order', async () => {
    expect(await groupIdsFor('')).toEqual([groupIds.drinks, groupIds.burgers, groupIds.eggs, groupIds.pastries]);
  });

  test('no filter: top-level groups carry their whole subtree', async () => {
    const res = await get('/v1/groups').expect(200);
    expect(res.body.metadata).toEqual({ groups: { total: 4 } });
    expect(res.body.groups[0]).toEqual(drinksTree);
    expect(allGroupIds(res.body.groups)).toEqual([groupIds.drinks, groupIds.hot, groupIds.espresso, groupIds.burgers, groupIds.eggs, groupIds.pastries]);
  });

  test('menus only: the top-level groups of that menu', async () => {
    expect(await groupIdsFor(`menus=${menuIds.breakfast}`)).toEqual([groupIds.eggs, groupIds.pastries]);
    expect(await groupIdsFor(`menus=${menuIds.allDay}`)).toEqual([groupIds.drinks, groupIds.burgers]);
  });

  test('menus: comma-separated and repeated values are OR-ed; output keeps source order', async () => {
    const all = [groupIds.drinks, groupIds.burgers, groupIds.eggs, groupIds.pastries];
    expect(await groupIdsFor(`menus=${menuIds.breakfast},${menuIds.allDay}`)).toEqual(all);
    expect(await groupIdsFor(`menus=${menuIds.breakfast}&menus=${menuIds.allDay}`)).toEqual(all);
  });

  test('menus: an unknown menu id gives an empty list, not an error', async () => {
    const res = await get('/v1/groups?menus=no-such-menu').expect(200);
    expect(res.text).toBe(JSON.stringify({ metadata: { groups: { total: 0 } }, groups: [] }));
    expect(await groupIdsFor(`menus=no-such-menu,${menuIds.breakfast}`)).toEqual([groupIds.eggs, groupIds.pastries]);
  });

  test('menus: ids are case-insensitive and trimmed', async () => {
    expect(await groupIdsFor(`menus=${menuIds.allDay.toUpperCase()}`)).toEqual([groupIds.drinks, groupIds.burgers]);
    expect(await groupIdsFor(`menus=%20${menuIds.breakfast}%20,%20%20${menuIds.allDay.toUpperCase()}`)).toEqual([
      groupIds.drinks,
      groupIds.burgers,
      groupIds.eggs,
      groupIds.pastries,
    ]);
  });

  test('unknown query parameters are ignored', async () => {
    expect(await groupIdsFor('foo=bar&group=nope&tag=x')).toEqual([groupIds.drinks, groupIds.burgers, groupIds.eggs, groupIds.pastries]);
  });
});

describe('GET /v1/groups: groups filter', () => {
  test('a top-level group, with its whole subtree, exactly as docs/menus.md', async () => {
    const res = await get(`/v1/groups?groups=${groupIds.drinks}`)
      .expect(200)
      .expect('Content-Type', /application\/json/);
    expect(res.body).toEqual(envelope([drinksTree]));
    expect(res.text).toBe(JSON.stringify(envelope([drinksTree])));
  });

  test('a depth-2 group is returned as a top-level entry with its whole subtree', async () => {
    const res = await get(`/v1/groups?groups=${groupIds.hot}`).expect(200);
    expect(res.text).toBe(JSON.stringify(envelope([hotTree])));
  });

  test('a depth-3 group (Espresso) is found and returned as a top-level entry', async () => {
    const res = await get(`/v1/groups?groups=${groupIds.espresso}`).expect(200);
    expect(res.text).toBe(JSON.stringify(envelope([espressoTree])));
  });

  test('several ids are OR-ed, in source order whatever the filter order', async () => {
    const expected = [groupIds.espresso, groupIds.burgers, groupIds.pastries];
    expect(await groupIdsFor(`groups=${groupIds.pastries},${groupIds.espresso},${groupIds.burgers}`)).toEqual(expected);
    expect(await groupIdsFor(`groups=${groupIds.pastries}&groups=${groupIds.burgers}&groups=${groupIds.espresso}`)).toEqual(expected);
    expect(await groupIdsFor(`groups=${groupIds.pastries},${groupIds.espresso}&groups=${groupIds.burgers}`)).toEqual(expected);
  });

  test('a match inside an already returned subtree is not repeated', async () => {
    const res = await get(`/v1/groups?groups=${groupIds.espresso},${groupIds.drinks},${groupIds.hot}`).expect(200);
    expect(res.body).toEqual(envelope([drinksTree]));
    expect(await groupIdsFor(`groups=${groupIds.espresso}&groups=${groupIds.hot}`)).toEqual([groupIds.hot]);
  });

  test('a repeated id is returned once', async () => {
    expect(await groupIdsFor(`groups=${groupIds.burgers},${groupIds.burgers}&groups=${groupIds.burgers}`)).toEqual([groupIds.burgers]);
  });

  test('ids are case-insensitive', async () => {
    expect(await groupIdsFor(`groups=${groupIds.espresso.toUpperCase()}`)).toEqual([groupIds.espresso]);
  });

  test('values are trimmed (spaces as %20 and as +)', async () => {
    expect(await groupIdsFor(`groups=%20${groupIds.burgers}%20,%09${groupIds.eggs}`)).toEqual([groupIds.burgers, groupIds.eggs]);
    expect(await groupIdsFor(`groups=++${groupIds.espresso}+`)).toEqual([groupIds.espresso]);
  });

  test('an unknown group id gives an empty list', async () => {
    expect(await groupIdsFor('groups=00000000-0000-4000-8000-000000000000')).toEqual([]);
  });
});

describe('GET /v1/groups: tags filter', () => {
  test('exact match, at any depth', async () => {
    expect(await groupIdsFor('tags=daypart:lunch')).toEqual([groupIds.burgers]);
    expect(await groupIdsFor('tags=caffeine')).toEqual([groupIds.espresso]);
    expect(await groupIdsFor('tags=caffeine-free')).toEqual([groupIds.pastries]);
  });

  test('exact means exact: no prefix, substring or case-folded match', async () => {
    expect(await groupIdsFor('tags=daypart')).toEqual([]);
    expect(await groupIdsFor('tags=daypart:')).toEqual([]);
    expect(await groupIdsFor('tags=lunch')).toEqual([]);
    expect(await groupIdsFor('tags=Daypart:lunch')).toEqual([]);
  });

  test('the tags of items do not make their group match', async () => {
    // The Latte item of Hot drinks is tagged `caffeine`; only the Espresso group is.
    expect(await groupIdsFor('tags=caffeine')).not.toContain(groupIds.hot);
  });

  test('temperature:* matches by prefix; the match is returned with its subtree, Espresso not repeated', async () => {
    const res = await get('/v1/groups?tags=temperature:*').expect(200);
    expect(res.text).toBe(JSON.stringify(envelope([hotTree])));
  });

  test('daypart:* matches by prefix across menus, in source order', async () => {
    expect(await groupIdsFor('tags=daypart:*')).toEqual([groupIds.drinks, groupIds.burgers, groupIds.eggs]);
  });

  test('comma-separated and repeated values are OR-ed, in source order', async () => {
    const expected = [groupIds.burgers, groupIds.eggs];
    expect(await groupIdsFor('tags=daypart:breakfast,daypart:lunch')).toEqual(expected);
    expect(await groupIdsFor('tags=daypart:lunch,daypart:breakfast')).toEqual(expected);
    expect(await groupIdsFor('tags=daypart:breakfast&tags=daypart:lunch')).toEqual(expected);
    expect(await groupIdsFor('tags=daypart:lunch&tags=daypart:breakfast')).toEqual(expected);
    expect(await groupIdsFor('tags=caffeine-free&tags=temperature:*')).toEqual([groupIds.hot, groupIds.pastries]);
  });

  test('a match inside an already returned subtree is not repeated: daypart:all,temperature:hot → Drinks once', async () => {
    const res = await get('/v1/groups?tags=daypart:all,temperature:hot').expect(200);
    expect(res.body).toEqual(envelope([drinksTree]));
    expect(res.body.metadata.groups.total).toBe(1);
    const repeated = await get('/v1/groups?tags=temperature:hot&tags=daypart:all').expect(200);
    expect(repeated.body).toEqual(res.body);
  });

  test('values are trimmed', async () => {
    expect(await groupIdsFor('tags=%20daypart:lunch%20,+caffeine+')).toEqual([groupIds.espresso, groupIds.burgers]);
  });

  test('a tag nobody uses gives an empty list', async () => {
    expect(await groupIdsFor('tags=no-such-tag')).toEqual([]);
  });
});

describe('GET /v1/groups: different filters are AND-ed', () => {
  test('groups + tags: a group must be listed and carry a tag', async () => {
    expect(await groupIdsFor(`groups=${groupIds.drinks},${groupIds.burgers}&tags=daypart:lunch`)).toEqual([groupIds.burgers]);
    expect(await groupIdsFor(`groups=${groupIds.hot},${groupIds.espresso}&tags=caffeine`)).toEqual([groupIds.espresso]);
    // Hot drinks is listed but lacks `caffeine`; Espresso has it but is not listed.
    expect(await groupIdsFor(`groups=${groupIds.hot}&tags=caffeine`)).toEqual([]);
  });

  test('menus + tags narrows the search to those menus', async () => {
    expect(await groupIdsFor(`menus=${menuIds.breakfast}&tags=daypart:*`)).toEqual([groupIds.eggs]);
    expect(await groupIdsFor(`menus=${menuIds.allDay}&tags=daypart:*`)).toEqual([groupIds.drinks, groupIds.burgers]);
    expect(await groupIdsFor(`menus=${menuIds.allDay}&tags=caffeine-free`)).toEqual([]);
    expect(await groupIdsFor(`menus=${menuIds.allDay}&tags=temperature:hot`)).toEqual([groupIds.hot]);
  });

  test('menus + groups narrows the search to those menus', async () => {
    expect(await groupIdsFor(`menus=${menuIds.breakfast}&groups=${groupIds.espresso}`)).toEqual([]);
    expect(await groupIdsFor(`menus=${menuIds.allDay}&groups=${groupIds.espresso},${groupIds.eggs}`)).toEqual([groupIds.espresso]);
  });

  test('menus + groups + tags', async () => {
    expect(await groupIdsFor(`menus=${menuIds.allDay},${menuIds.breakfast}&groups=${groupIds.espresso},${groupIds.eggs}&tags=caffeine`)).toEqual([
      groupIds.espresso,
    ]);
    expect(await groupIdsFor(`menus=${menuIds.breakfast}&groups=${groupIds.espresso},${groupIds.eggs}&tags=daypart:breakfast`)).toEqual([groupIds.eggs]);
  });

  test('an unknown menu id with other filters gives an empty list', async () => {
    expect(await groupIdsFor(`menus=no-such-menu&groups=${groupIds.drinks}&tags=daypart:*`)).toEqual([]);
  });
});

describe('GET /v1/groups: values of the tree', () => {
  test('null price, calories and description are kept as null', async () => {
    const res = await get(`/v1/groups?groups=${groupIds.drinks}`).expect(200);
    const drinks = res.body.groups[0];
    expect(drinks.description).toBeNull();
    const doubleShot = drinks.groups[0].groups[0].items[0];
    expect(doubleShot).toMatchObject({ name: 'Double shot', description: null, price: null, calories: null });
    expect(Object.keys(doubleShot)).toEqual(ITEM_KEYS);
    const lemonade = drinks.items[0];
    expect(lemonade).toMatchObject({ name: 'Lemonade', description: 'Fresh', price: 4.25, calories: null });
  });

  test('size-variant child items are present with their own totals, prices and stock', async () => {
    const res = await get(`/v1/groups?groups=${groupIds.hot}`).expect(200);
    const latte = res.body.groups[0].items[0];
    expect(latte.name).toBe('Latte');
    expect(latte.metadata).toEqual({ items: { total: 2 } });
    expect(latte.items.map((i: Json) => [i.name, i.price, i.inStock, i.metadata.items.total])).toEqual([
      ['Latte, 12 oz', 4.25, true, 0],
      ['Latte, 16 oz', 4.95, false, 0],
    ]);
  });

  test('empty groups and items are empty arrays with totals of 0', async () => {
    const res = await get(`/v1/groups?menus=${menuIds.breakfast}`).expect(200);
    expect(res.body).toEqual(
      envelope([
        {
          metadata: { groups: { total: 0 }, items: { total: 0 } },
          id: groupIds.eggs,
          name: 'Eggs',
          description: null,
          tags: ['daypart:breakfast'],
          groups: [],
          items: [],
        },
        {
          metadata: { groups: { total: 0 }, items: { total: 0 } },
          id: groupIds.pastries,
          name: 'Pastries',
          description: null,
          tags: ['caffeine-free'],
          groups: [],
          items: [],
        },
      ]),
    );
  });

  test.each([
    '',
    `menus=${menuIds.allDay}`,
    `menus=${menuIds.breakfast}`,
    `groups=${groupIds.drinks}`,
    `groups=${groupIds.hot}`,
    `groups=${groupIds.espresso},${groupIds.burgers},${groupIds.eggs}`,
    'tags=daypart:*',
    'tags=temperature:*',
    'tags=caffeine',
    'tags=daypart:all,temperature:hot',
    'menus=no-such-menu',
    'tags=no-such-tag',
  ])('every metadata total equals its array length, and every field has the documented shape: ?%s', async (query) => {
    const res = await get(`/v1/groups?${query}`).expect(200);
    expectGroupsEnvelope(res.body);
  });

  test('the totals checker walks the whole tree (and would catch a wrong total)', async () => {
    const res = await get('/v1/groups').expect(200);
    // Envelope 1 + 6 groups × 2 + 6 items × 1.
    expect(expectConsistentTotals(res.body)).toBe(1 + 6 * 2 + 6);
    const broken = structuredClone(res.body);
    broken.groups[0].groups[0].items[0].items[1].metadata.items.total = 1;
    expect(totalsReport(broken).problems).toEqual(['$.groups[0].groups[0].items[0].items[1].metadata.items.total is 1, items has 0']);
    const brokenEnvelope = { ...res.body, metadata: { groups: { total: 3 } } };
    expect(totalsReport(brokenEnvelope).problems).toEqual(['$.metadata.groups.total is 3, groups has 4']);
  });
});

describe('GET /v1/groups: bad filter values', () => {
  test.each(['tags=', 'tags=,', 'tags=%20', 'tags=+,+', 'tags=&tags='])('an empty tags value is a 400 naming tags: ?%s', async (query) => {
    const res = await get(`/v1/groups?${query}`)
      .expect(400)
      .expect('Content-Type', /application\/json/);
    expect(res.body.message).toMatch(/\btags\b/);
    expect(res.body.details).toEqual([{ path: 'tags', message: res.body.message }]);
  });

  test.each(['menus', 'groups'])('an empty %s value is a 400 naming it', async (name) => {
    const res = await get(`/v1/groups?${name}=`).expect(400);
    expect(res.body.message).toMatch(new RegExp(`\\b${name}\\b`));
    expect(res.body.details).toEqual([{ path: name, message: res.body.message }]);
  });

  test('an empty value is an error even beside good filters, never "no filter"', async () => {
    const res = await get(`/v1/groups?menus=${menuIds.allDay}&tags=`).expect(400);
    expect(res.body.message).toMatch(/\btags\b/);
    expect(res.body.groups).toBeUndefined();
  });

  test('several bad parameters are all named in details', async () => {
    const res = await get('/v1/groups?menus=&groups=,&tags=').expect(400);
    expect(Object.keys(res.body)).toEqual(['message', 'details']);
    expect(res.body.details.map((d: Json) => d.path).sort()).toEqual(['groups', 'menus', 'tags']);
    expect(res.body.message).toBe(res.body.details[0].message);
  });
});

describe('menu area: other accounts behave as absent', () => {
  test('a group of another account is not found by id: 200 and empty, no 403', async () => {
    const res = await get(`/v1/groups?groups=${groupIds.other}`).expect(200);
    expect(res.body).toEqual(envelope([]));
  });

  test('a menu of another account is like an unknown menu: 200 and empty', async () => {
    expect(await groupIdsFor(`menus=${menuIds.otherAccount}`)).toEqual([]);
    expect(await groupIdsFor(`menus=${menuIds.otherAccount}&groups=${groupIds.other}`)).toEqual([]);
    expect(await groupIdsFor(`menus=${menuIds.otherAccount},${menuIds.breakfast}`)).toEqual([groupIds.eggs, groupIds.pastries]);
  });

  test("tags do not reach into another account's menus", async () => {
    // Other drinks (acc_other) is temperature:hot too.
    const ids = await groupIdsFor('tags=temperature:hot');
    expect(ids).toEqual([groupIds.hot]);
  });

  test('the other account sees its own tree and none of ours', async () => {
    expect(await groupIdsFor('', keys.zoe)).toEqual([groupIds.other]);
    expect(await groupIdsFor('tags=temperature:*', keys.zoe)).toEqual([groupIds.other]);
    expect(await groupIdsFor(`groups=${groupIds.drinks},${groupIds.espresso}`, keys.zoe)).toEqual([]);
    expect(await groupIdsFor(`menus=${menuIds.allDay}`, keys.zoe)).toEqual([]);
  });
});

describe('menu area: keys and scopes', () => {
  // Its own app: failed key attempts are counted per client, and must not leak into other tests.
  let a: TestApp;
  beforeAll(async () => {
    a = await buildTestApp({ dataset: catalog() });
  });
  afterAll(async () => a.close());

  const paths = ['/v1/menus', '/v1/groups', `/v1/groups?groups=${groupIds.drinks}`];

  test.each(paths)('no key → 401 Missing API key, without a Bearer challenge: %s', async (path) => {
    const res = await request(a.app).get(path).expect(401);
    expect(res.text).toBe(JSON.stringify({ message: 'Missing API key' }));
    expect(res.headers['www-authenticate']).toBeUndefined();
  });

  test.each(paths)('an empty X-API-Key is a missing key: %s', async (path) => {
    await request(a.app).get(path).set('X-API-Key', '').expect(401, { message: 'Missing API key' });
  });

  test.each(paths)('the menu area takes X-API-Key, not Authorization: Bearer: %s', async (path) => {
    const res = await request(a.app).get(path).set('Authorization', `Bearer ${keys.ana}`).expect(401);
    expect(res.body).toEqual({ message: 'Missing API key', details: [{ path: 'X-API-Key', message: expect.stringContaining('X-API-Key header') }] });
  });

  test('an unknown or malformed key → 401 Invalid API key', async () => {
    await request(a.app).get('/v1/menus').set('X-API-Key', 'sk_test_nobody_has_this_key_0000').expect(401, { message: 'Invalid API key' });
    await request(a.app).get('/v1/groups').set('X-API-Key', 'short').expect(401, { message: 'Invalid API key' });
  });

  test.each(paths)('a key without menu:read → 403 Invalid scopes: %s', async (path) => {
    const res = await request(a.app).get(path).set('X-API-Key', keys.anaNoScopes).expect(403);
    expect(res.text).toBe(JSON.stringify({ message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] }));
  });

  test('keys with menu:read are let in, with or without other scopes', async () => {
    for (const key of [keys.ana, keys.anaMenuOnly, keys.ben, keys.zoe]) {
      await request(a.app).get('/v1/menus').set('X-API-Key', key).expect(200);
      await request(a.app).get('/v1/groups').set('X-API-Key', key).expect(200);
    }
  });

  test('the key is checked before the query: a bad filter without a key is 401, without the scope 403', async () => {
    await request(a.app).get('/v1/groups?tags=').expect(401, { message: 'Missing API key' });
    await request(a.app)
      .get('/v1/groups?tags=')
      .set('X-API-Key', keys.anaNoScopes)
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] });
  });
});

describe('menu area: a re-import is visible on the next request', () => {
  let r: TestApp;
  beforeAll(async () => {
    r = await buildTestApp({ dataset: catalog() });
  });
  afterAll(async () => r.close());

  const saladsId = 'cccccccc-0000-4000-8000-000000000001';
  const greensId = 'cccccccc-0000-4000-8000-000000000002';

  function changedAllDay() {
    const menu = catalog().menus.find((m) => m.id === menuIds.allDay)!;
    return {
      ...menu,
      name: 'All day (summer)',
      description: null,
      tags: ['daypart:all', 'season:summer'],
      groups: [
        {
          id: saladsId,
          name: 'Salads',
          description: 'Cold',
          tags: ['temperature:cold'],
          groups: [
            {
              id: greensId,
              name: 'Greens',
              description: null,
              tags: [],
              groups: [],
              items: [
                {
                  id: 'cccccccc-0000-4000-8000-000000000003',
                  name: 'Garden salad',
                  description: null,
                  price: 7.5,
                  calories: null,
                  tags: [],
                  inStock: true,
                  items: [],
                },
              ],
            },
          ],
          items: [],
        },
        // Burgers kept by id, renamed, items dropped.
        { id: groupIds.burgers, name: 'Burgers & more', description: null, tags: ['daypart:lunch'], groups: [], items: [] },
      ],
    };
  }

  const req = (path: string) => request(r.app).get(path).set('X-API-Key', keys.ana);

  test('the tree is replaced, not merged, and the menu record changes with it', async () => {
    // Read first, so any memoised tree is warm.
    const before = await req(`/v1/groups?menus=${menuIds.allDay}`).expect(200);
    expect(before.body.groups.map((g: Json) => g.id)).toEqual([groupIds.drinks, groupIds.burgers]);
    await req(`/v1/groups?groups=${groupIds.espresso}`).expect(200);

    await importDataset(r.db, { menus: [changedAllDay()] }, { nowMs: r.clock.now() });

    const menus = await req('/v1/menus').expect(200);
    expect(menus.body.menus[0]).toEqual({
      id: menuIds.allDay,
      name: 'All day (summer)',
      description: null,
      tags: ['daypart:all', 'season:summer'],
      metadata: { groups: { total: 2 } },
    });
    expect(menus.body.menus.map((m: Json) => m.id)).toEqual([menuIds.allDay, menuIds.breakfast]);

    const after = await req(`/v1/groups?menus=${menuIds.allDay}`).expect(200);
    expectGroupsEnvelope(after.body);
    expect(allGroupIds(after.body.groups)).toEqual([saladsId, greensId, groupIds.burgers]);
    expect(after.body.groups[1]).toEqual({
      metadata: { groups: { total: 0 }, items: { total: 0 } },
      id: groupIds.burgers,
      name: 'Burgers & more',
      description: null,
      tags: ['daypart:lunch'],
      groups: [],
      items: [],
    });

    // Nothing of the old tree survives.
    for (const gone of [groupIds.drinks, groupIds.hot, groupIds.espresso]) {
      const res = await req(`/v1/groups?groups=${gone}`).expect(200);
      expect(res.body).toEqual(envelope([]));
    }
    expect((await req('/v1/groups?tags=temperature:*').expect(200)).body.groups.map((g: Json) => g.id)).toEqual([saladsId]);
    const depth2 = await req(`/v1/groups?groups=${greensId}`).expect(200);
    expectGroupsEnvelope(depth2.body);
    expect(depth2.body.groups[0].items[0]).toMatchObject({ name: 'Garden salad', price: 7.5, calories: null });

    // The other menu is untouched.
    expect((await req(`/v1/groups?menus=${menuIds.breakfast}`).expect(200)).body.groups.map((g: Json) => g.id)).toEqual([groupIds.eggs, groupIds.pastries]);
  });

  test('a second re-import at the same clock time is visible too', async () => {
    const menu = changedAllDay();
    menu.groups = [menu.groups[1]!];
    await importDataset(r.db, { menus: [menu] }, { nowMs: r.clock.now() });
    const res = await req(`/v1/groups?menus=${menuIds.allDay}`).expect(200);
    expect(res.body.groups.map((g: Json) => g.id)).toEqual([groupIds.burgers]);
    expectGroupsEnvelope(res.body);
    expect((await req('/v1/menus').expect(200)).body.menus[0].metadata.groups.total).toBe(1);
  });
});

describe('menu area: re-imports of part of the catalog', () => {
  const names = async (app: TestApp, path: string, list: 'menus' | 'groups') =>
    (await request(app.app).get(path).set('X-API-Key', keys.ana).expect(200)).body[list].map((x: Json) => x.name);

  test('re-importing one menu on its own does not move it in the source order', async () => {
    const app = await buildTestApp({ dataset: catalog() });
    try {
      expect(await names(app, '/v1/menus', 'menus')).toEqual(['All day', 'Breakfast']);
      const breakfast = catalog().menus.find((m) => m.id === menuIds.breakfast)!;
      await importDataset(app.db, { menus: [{ ...breakfast, name: 'Breakfast (new)' }] }, { nowMs: app.clock.now() });
      // Upsert by id (docs/datasets.md) of one menu must not reorder the others (docs/menus.md: source order).
      expect(await names(app, '/v1/menus', 'menus')).toEqual(['All day', 'Breakfast (new)']);
      expect(await names(app, '/v1/groups', 'groups')).toEqual(['Drinks', 'Burgers', 'Eggs', 'Pastries']);
    } finally {
      await app.close();
    }
  });

  test('a menu pruned and then imported again shows its new tree, even at the same clock time', async () => {
    const app = await buildTestApp({ dataset: catalog() });
    try {
      expect(await names(app, `/v1/groups?menus=${menuIds.breakfast}`, 'groups')).toEqual(['Eggs', 'Pastries']);
      const full = catalog();
      await importDataset(app.db, { ...full, menus: full.menus.filter((m) => m.id !== menuIds.breakfast) }, { nowMs: app.clock.now(), prune: true });
      expect(await names(app, `/v1/groups?menus=${menuIds.breakfast}`, 'groups')).toEqual([]);
      const breakfast = structuredClone(full.menus.find((m) => m.id === menuIds.breakfast)!);
      breakfast.groups[0]!.name = 'Eggz'; // same length as before, on purpose
      await importDataset(app.db, { menus: [breakfast] }, { nowMs: app.clock.now() });
      expect(await names(app, `/v1/groups?menus=${menuIds.breakfast}`, 'groups')).toEqual(['Eggz', 'Pastries']);
    } finally {
      await app.close();
    }
  });
});

describe('menu area on the bundled demo dataset', () => {
  const demoKey = 'sk_demo_harbor_ana_all_0123456789';
  let d: TestApp;
  let demo: Json;
  beforeAll(async () => {
    demo = JSON.parse(readFileSync(new URL('../../src/demo/dataset.json', import.meta.url), 'utf8'));
    d = await buildTestApp({ dataset: demo });
  });
  afterAll(async () => d.close());

  const req = (path: string) => request(d.app).get(path).set('X-API-Key', demoKey);

  /** The demo key's account's menus, straight from the dataset file. */
  const accountMenus = (): Json[] => {
    const user = demo.users.find((u: Json) => demo.api_keys.some((k: Json) => k.key === demoKey && k.user_id === u.id));
    return demo.menus.filter((m: Json) => m.account_id === user.account_id);
  };

  /** A group at depth 3 of the demo key's menus (top level = depth 1). */
  const depth3Group = (): Json => {
    for (const menu of accountMenus()) {
      for (const g1 of menu.groups) for (const g2 of g1.groups ?? []) for (const g3 of g2.groups ?? []) return g3;
    }
    throw new Error('the demo dataset has no depth-3 group for the demo key');
  };

  test("lists the account's menus in dataset order, with top-level group counts", async () => {
    const res = await req('/v1/menus').expect(200);
    const expected = accountMenus();
    expect(expected.length).toBeGreaterThan(0);
    expect(res.body.metadata.menus.total).toBe(expected.length);
    expect(res.body.menus.map((m: Json) => [m.id, m.name, m.metadata.groups.total])).toEqual(expected.map((m) => [m.id, m.name, m.groups.length]));
    for (const menu of res.body.menus) expect(Object.keys(menu)).toEqual(MENU_KEYS);
  });

  test('no filter: every top-level group, every total consistent', async () => {
    const res = await req('/v1/groups').expect(200);
    expectGroupsEnvelope(res.body);
    expect(res.body.groups.map((g: Json) => g.id)).toEqual(accountMenus().flatMap((m) => m.groups.map((g: Json) => g.id)));
    expect(expectConsistentTotals(res.body)).toBeGreaterThan(50);
  });

  test('a depth-3 group is findable by id, upper-cased too, with its subtree', async () => {
    const target = depth3Group();
    for (const id of [target.id, target.id.toUpperCase()]) {
      const res = await req(`/v1/groups?groups=${id}`).expect(200);
      expectGroupsEnvelope(res.body);
      expect(res.body.groups).toHaveLength(1);
      expect(res.body.groups[0]).toMatchObject({ id: target.id, name: target.name, tags: target.tags ?? [] });
      expect(res.body.groups[0].items.map((i: Json) => i.id)).toEqual((target.items ?? []).map((i: Json) => i.id));
    }
  });

  test('tags=daypart:* returns the outermost groups with a daypart tag, all totals consistent', async () => {
    const expected: string[] = [];
    const visit = (groups: Json[]): void => {
      for (const g of groups) {
        if ((g.tags ?? []).some((tag: string) => tag.startsWith('daypart:'))) expected.push(g.id);
        else visit(g.groups ?? []);
      }
    };
    for (const menu of accountMenus()) visit(menu.groups);
    expect(expected.length).toBeGreaterThan(0);

    const res = await req('/v1/groups?tags=daypart:*').expect(200);
    expectGroupsEnvelope(res.body);
    expect(res.body.groups.map((g: Json) => g.id)).toEqual(expected);
    for (const g of res.body.groups) expect(g.tags.some((tag: string) => tag.startsWith('daypart:'))).toBe(true);
  });

  test("another demo account's groups are absent for the demo key", async () => {
    const user = demo.users.find((u: Json) => demo.api_keys.some((k: Json) => k.key === demoKey && k.user_id === u.id));
    const foreign = demo.menus.find((m: Json) => m.account_id !== user.account_id && m.groups.length > 0);
    expect(foreign).toBeDefined();
    expect((await req(`/v1/groups?menus=${foreign.id}`).expect(200)).body).toEqual(envelope([]));
    expect((await req(`/v1/groups?groups=${foreign.groups[0].id}`).expect(200)).body).toEqual(envelope([]));
  });
});

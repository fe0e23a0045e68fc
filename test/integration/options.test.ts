import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import type { Express } from 'express';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, groupIds, keys, menuIds } from '../fixtures/catalog.js';
import { importDataset } from '../../src/dataset/import.js';

/**
 * docs/options.md (option endpoints) over HTTP in embedded mode, with docs/api.md (keys and
 * scopes) and 3 (errors) as they apply to them. Option sources come from
 * manifests/connector.json, so this also exercises the shipped manifest.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

const MENUS = '/v1/menus/options';
const DEVICES = '/v1/devices/options';
const groupsPath = (menuId: string) => `/v1/menus/${menuId}/groups/options`;

/** The full expected lists for the fixture catalog. */
const ANA_MENUS = [
  ['All day', menuIds.allDay],
  ['Breakfast', menuIds.breakfast],
];
const ALL_DAY_GROUPS = [
  ['Drinks', groupIds.drinks],
  ['Drinks › Hot drinks', groupIds.hot],
  ['Drinks › Hot drinks › Espresso', groupIds.espresso],
  ['Burgers', groupIds.burgers],
];
const ANA_DEVICES = [
  ['Café window', 'a4:83:e7:1f:2b:05'],
  ['Drive-thru board', 'a4:83:e7:1f:2b:02'],
  ['Front counter', 'a4:83:e7:1f:2b:01'],
  ['Patio board', 'a4:83:e7:1f:2b:03'],
];
const BEN_DEVICES = [
  ['Café window', 'a4:83:e7:1f:2b:05'],
  ['Front counter', 'a4:83:e7:1f:2b:01'],
  ['Kitchen screen', 'a4:83:e7:1f:2b:04'],
];

const get = (app: Express, path: string, key: string = keys.ana) => request(app).get(path).set('X-API-Key', key);

/** A 400 that names `param` in its message and in its details. */
function expectNames(res: { status: number; body: Json }, param: string): void {
  expect(res.status).toBe(400);
  expect(typeof res.body.message).toBe('string');
  expect(res.body.message).toContain(param);
  expect(res.body.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: param })]));
}

/** Path and query of an absolute `Link: <url>; rel="next"` header, or null. */
function nextLink(res: { headers: Record<string, string | undefined> }): string | null {
  const link = res.headers.link;
  if (!link) return null;
  const m = /^<([^>]+)>;\s*rel="next"$/.exec(link);
  expect(m).not.toBeNull();
  const url = new URL(m![1]!);
  return `${url.pathname}${url.search}`;
}

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog() });
});
afterAll(async () => t.close());

describe('default tuples', () => {
  test('menus: [label, value] of the key account, sorted by label', async () => {
    const res = await get(t.app, MENUS).expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(ANA_MENUS);
    expect(res.headers['x-total-count']).toBe('2');
    expect(res.headers.link).toBeUndefined();
  });

  test('another account sees only its own menus', async () => {
    const res = await get(t.app, MENUS, keys.zoe).expect(200);
    expect(res.body).toEqual([['Other menu', menuIds.otherAccount]]);
  });

  test('groups: full paths joined by " › ", tree order depth first', async () => {
    const res = await get(t.app, groupsPath(menuIds.allDay)).expect(200);
    expect(res.body).toEqual(ALL_DAY_GROUPS);
    expect(res.headers['x-total-count']).toBe('4');
  });

  test('groups keep source order, not label order', async () => {
    // "Burgers" would sort before "Drinks"; tree order puts it last.
    const res = await get(t.app, groupsPath(menuIds.allDay)).expect(200);
    expect((res.body as Json[]).map((o) => o[0])).not.toEqual([...(res.body as Json[]).map((o) => o[0])].sort());
    const res2 = await get(t.app, groupsPath(menuIds.breakfast)).expect(200);
    expect(res2.body).toEqual([
      ['Eggs', groupIds.eggs],
      ['Pastries', groupIds.pastries],
    ]);
  });

  test('the menu id in the path matches case-insensitively', async () => {
    const res = await get(t.app, groupsPath(menuIds.allDay.toUpperCase())).expect(200);
    expect(res.body).toEqual(ALL_DAY_GROUPS);
  });

  test('devices: the devices the user may read, sorted by label, ids lower case', async () => {
    const ana = await get(t.app, DEVICES).expect(200);
    expect(ana.body).toEqual(ANA_DEVICES);
    const ben = await get(t.app, DEVICES, keys.ben).expect(200);
    expect(ben.body).toEqual(BEN_DEVICES);
    for (const [, value] of [...(ana.body as string[][]), ...(ben.body as string[][])]) {
      expect(value).toBe(value!.toLowerCase());
    }
    // The fixture stores this one upper case.
    expect((ben.body as string[][]).map((o) => o[1])).toContain('a4:83:e7:1f:2b:01');
    expect((ben.body as string[][]).map((o) => o[1])).toContain('a4:83:e7:1f:2b:04');
  });

  test('another account sees only its own devices', async () => {
    const res = await get(t.app, DEVICES, keys.zoe).expect(200);
    expect(res.body).toEqual([['Other lobby', 'b0:00:00:00:00:01']]);
  });

  test('format=tuples is the default, given explicitly', async () => {
    const res = await get(t.app, `${MENUS}?format=tuples`).expect(200);
    expect(res.body).toEqual(ANA_MENUS);
  });
});

describe('formats', () => {
  test('objects: [{label, value}] with exactly those keys', async () => {
    const res = await get(t.app, `${MENUS}?format=objects`).expect(200);
    expect(res.body).toEqual(ANA_MENUS.map(([label, value]) => ({ label, value })));
    for (const o of res.body as Json[]) expect(Object.keys(o)).toEqual(['label', 'value']);
    const groups = await get(t.app, `${groupsPath(menuIds.allDay)}?format=objects`).expect(200);
    expect(groups.body).toEqual(ALL_DAY_GROUPS.map(([label, value]) => ({ label, value })));
    const devices = await get(t.app, `${DEVICES}?format=objects`).expect(200);
    expect(devices.body).toEqual(ANA_DEVICES.map(([label, value]) => ({ label, value })));
  });

  test('n8n: {results:[{name, value}]} without paginationToken when everything fits', async () => {
    const res = await get(t.app, `${DEVICES}?format=n8n`).expect(200);
    expect(res.body).toEqual({ results: ANA_DEVICES.map(([name, value]) => ({ name, value })) });
    expect(Object.keys(res.body)).toEqual(['results']);
    const limited = await get(t.app, `${DEVICES}?format=n8n&limit=4`).expect(200);
    expect(Object.keys(limited.body)).toEqual(['results']);
    expect(limited.headers.link).toBeUndefined();
  });

  test('n8n: paginationToken only when there is a next page, and it pages through everything', async () => {
    const seen: Json[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const url = `${DEVICES}?format=n8n&limit=3${token ? `&cursor=${encodeURIComponent(token)}` : ''}`;
      const res = await get(t.app, url).expect(200);
      pages += 1;
      expect(res.headers['x-total-count']).toBe('4');
      seen.push(...res.body.results);
      token = res.body.paginationToken;
      if (token !== undefined) {
        expect(typeof token).toBe('string');
        expect(res.headers.link).toBeDefined();
      } else {
        expect('paginationToken' in res.body).toBe(false);
        expect(res.headers.link).toBeUndefined();
      }
    } while (token !== undefined && pages < 10);
    expect(pages).toBe(2);
    expect(seen).toEqual(ANA_DEVICES.map(([name, value]) => ({ name, value })));
  });

  test('n8n on groups uses the path label', async () => {
    const res = await get(t.app, `${groupsPath(menuIds.allDay)}?format=n8n`).expect(200);
    expect(res.body).toEqual({ results: ALL_DAY_GROUPS.map(([name, value]) => ({ name, value })) });
  });

  test('tree: top level is [[name, value, null, hasChildren]]', async () => {
    const res = await get(t.app, `${groupsPath(menuIds.allDay)}?format=tree`).expect(200);
    expect(res.body).toEqual([
      ['Drinks', groupIds.drinks, null, true],
      ['Burgers', groupIds.burgers, null, false],
    ]);
    expect(res.headers['x-total-count']).toBe('2');
  });

  test('tree: the children of parent, labelled with their own name', async () => {
    const drinks = await get(t.app, `${groupsPath(menuIds.allDay)}?format=tree&parent=${groupIds.drinks}`).expect(200);
    expect(drinks.body).toEqual([['Hot drinks', groupIds.hot, null, true]]);
    const hot = await get(t.app, `${groupsPath(menuIds.allDay)}?format=tree&parent=${groupIds.hot}`).expect(200);
    expect(hot.body).toEqual([['Espresso', groupIds.espresso, null, false]]);
    const leaf = await get(t.app, `${groupsPath(menuIds.allDay)}?format=tree&parent=${groupIds.espresso}`).expect(200);
    expect(leaf.body).toEqual([]);
    expect(leaf.headers['x-total-count']).toBe('0');
  });

  test('tree: an unknown parent, or a group of another menu, is a 400 naming parent', async () => {
    expectNames(await get(t.app, `${groupsPath(menuIds.allDay)}?format=tree&parent=nope`), 'parent');
    expectNames(await get(t.app, `${groupsPath(menuIds.allDay)}?format=tree&parent=${groupIds.eggs}`), 'parent');
    expectNames(await get(t.app, `${groupsPath(menuIds.allDay)}?format=tree&parent=${groupIds.other}`), 'parent');
  });

  test('parent is ignored unless format=tree', async () => {
    const res = await get(t.app, `${groupsPath(menuIds.allDay)}?parent=nope`).expect(200);
    expect(res.body).toEqual(ALL_DAY_GROUPS);
  });

  test('tree: q filters the level by the node name', async () => {
    const res = await get(t.app, `${groupsPath(menuIds.allDay)}?format=tree&q=burg`).expect(200);
    expect(res.body).toEqual([['Burgers', groupIds.burgers, null, false]]);
    expect(res.headers['x-total-count']).toBe('1');
  });

  test('format=tree on menus and devices is a 400 naming format', async () => {
    expectNames(await get(t.app, `${MENUS}?format=tree`), 'format');
    expectNames(await get(t.app, `${DEVICES}?format=tree`), 'format');
  });

  test('an unknown format is a 400 naming format', async () => {
    expectNames(await get(t.app, `${MENUS}?format=xml`), 'format');
    expectNames(await get(t.app, `${groupsPath(menuIds.allDay)}?format=TREE`), 'format');
  });

  test('unknown query parameters are ignored', async () => {
    const res = await get(t.app, `${MENUS}?whatever=1&page=3`).expect(200);
    expect(res.body).toEqual(ANA_MENUS);
  });
});

describe('q', () => {
  test('is accent- and case-insensitive (cafe finds Café)', async () => {
    for (const q of ['cafe', 'CAFE', 'Café', 'CAFÉ', 'afé w', 'Cafe\u0301']) {
      const ben = await get(t.app, `${DEVICES}?q=${encodeURIComponent(q)}`, keys.ben).expect(200);
      expect(ben.body).toEqual([['Café window', 'a4:83:e7:1f:2b:05']]);
      expect(ben.headers['x-total-count']).toBe('1');
    }
    const ana = await get(t.app, `${DEVICES}?q=cafe`).expect(200);
    expect(ana.body).toEqual([['Café window', 'a4:83:e7:1f:2b:05']]);
  });

  test('an accented query finds an unaccented label', async () => {
    const res = await get(t.app, `${DEVICES}?q=${encodeURIComponent('frönt')}`).expect(200);
    expect(res.body).toEqual([['Front counter', 'a4:83:e7:1f:2b:01']]);
  });

  test('is a substring match on the label, not the value', async () => {
    const board = await get(t.app, `${DEVICES}?q=BOARD`).expect(200);
    expect(board.body).toEqual([
      ['Drive-thru board', 'a4:83:e7:1f:2b:02'],
      ['Patio board', 'a4:83:e7:1f:2b:03'],
    ]);
    expect(board.headers['x-total-count']).toBe('2');
    const byValue = await get(t.app, `${DEVICES}?q=${encodeURIComponent('a4:83')}`).expect(200);
    expect(byValue.body).toEqual([]);
    expect(byValue.headers['x-total-count']).toBe('0');
  });

  test('on groups matches the path label', async () => {
    const hot = await get(t.app, `${groupsPath(menuIds.allDay)}?q=hot`).expect(200);
    expect(hot.body).toEqual([
      ['Drinks › Hot drinks', groupIds.hot],
      ['Drinks › Hot drinks › Espresso', groupIds.espresso],
    ]);
    // "drinks" is in every path under Drinks, including Espresso's.
    const drinks = await get(t.app, `${groupsPath(menuIds.allDay)}?q=DRINKS`).expect(200);
    expect(drinks.body).toEqual(ALL_DAY_GROUPS.slice(0, 3));
    expect(drinks.headers['x-total-count']).toBe('3');
    const across = await get(t.app, `${groupsPath(menuIds.allDay)}?q=${encodeURIComponent('drinks › hot')}`).expect(200);
    expect(across.body).toEqual(ALL_DAY_GROUPS.slice(1, 3));
  });

  test('on menus', async () => {
    const res = await get(t.app, `${MENUS}?q=BREAK`).expect(200);
    expect(res.body).toEqual([['Breakfast', menuIds.breakfast]]);
  });

  test('empty q is no filter; an over-long q is a 400 naming q', async () => {
    const res = await get(t.app, `${MENUS}?q=`).expect(200);
    expect(res.body).toEqual(ANA_MENUS);
    expectNames(await get(t.app, `${MENUS}?q=${'a'.repeat(201)}`), 'q');
  });

  test('with other formats', async () => {
    const objects = await get(t.app, `${DEVICES}?q=cafe&format=objects`, keys.ben).expect(200);
    expect(objects.body).toEqual([{ label: 'Café window', value: 'a4:83:e7:1f:2b:05' }]);
    const n8n = await get(t.app, `${DEVICES}?q=cafe&format=n8n`, keys.ben).expect(200);
    expect(n8n.body).toEqual({ results: [{ name: 'Café window', value: 'a4:83:e7:1f:2b:05' }] });
  });
});

describe('limit and cursor', () => {
  /** Follows `Link` from the first page; returns all items and the pages' sizes. */
  async function walk(first: string, key: string = keys.ana): Promise<{ items: Json[]; sizes: number[]; totals: string[] }> {
    const items: Json[] = [];
    const sizes: number[] = [];
    const totals: string[] = [];
    let next: string | null = first;
    while (next !== null && sizes.length < 20) {
      const res = await get(t.app, next, key).expect(200);
      items.push(...(res.body as Json[]));
      sizes.push((res.body as Json[]).length);
      totals.push(res.headers['x-total-count']!);
      next = nextLink(res);
    }
    return { items, sizes, totals };
  }

  test('without limit the whole list comes in one response, no Link', async () => {
    const res = await get(t.app, DEVICES).expect(200);
    expect(res.body).toHaveLength(4);
    expect(res.headers.link).toBeUndefined();
  });

  test('following Link through every page reassembles the full list (devices)', async () => {
    for (const limit of [1, 2, 3]) {
      const { items, sizes, totals } = await walk(`${DEVICES}?limit=${limit}`);
      expect(items).toEqual(ANA_DEVICES);
      expect(sizes.every((n) => n <= limit)).toBe(true);
      expect(sizes).toHaveLength(Math.ceil(4 / limit));
      expect(new Set(totals)).toEqual(new Set(['4']));
    }
  });

  test('following Link through every page reassembles the full list (groups, keeps the path)', async () => {
    const first = await get(t.app, `${groupsPath(menuIds.allDay)}?limit=1`).expect(200);
    const link = nextLink(first)!;
    expect(link.startsWith(`${groupsPath(menuIds.allDay)}?`)).toBe(true);
    const { items, sizes } = await walk(`${groupsPath(menuIds.allDay)}?limit=1`);
    expect(items).toEqual(ALL_DAY_GROUPS);
    expect(sizes).toEqual([1, 1, 1, 1]);
  });

  test('Link keeps the other query parameters (q, format)', async () => {
    const first = await get(t.app, `${groupsPath(menuIds.allDay)}?q=drinks&format=objects&limit=2`).expect(200);
    expect(first.headers['x-total-count']).toBe('3');
    const link = new URL(`http://x${nextLink(first)!}`);
    expect(link.searchParams.get('q')).toBe('drinks');
    expect(link.searchParams.get('format')).toBe('objects');
    expect(link.searchParams.get('limit')).toBe('2');
    expect(link.searchParams.get('cursor')).toBeTruthy();
    const { items } = await walk(`${groupsPath(menuIds.allDay)}?q=drinks&format=objects&limit=2`);
    expect(items).toEqual(ALL_DAY_GROUPS.slice(0, 3).map(([label, value]) => ({ label, value })));
  });

  test('the last page has no Link', async () => {
    const res = await get(t.app, `${DEVICES}?limit=4`).expect(200);
    expect(res.body).toEqual(ANA_DEVICES);
    expect(res.headers.link).toBeUndefined();
    const big = await get(t.app, `${DEVICES}?limit=1000`).expect(200);
    expect(big.body).toEqual(ANA_DEVICES);
    expect(big.headers.link).toBeUndefined();
  });

  test('X-Total-Count is the number of matches, not the page size', async () => {
    const res = await get(t.app, `${DEVICES}?limit=1`).expect(200);
    expect(res.body).toHaveLength(1);
    expect(res.headers['x-total-count']).toBe('4');
    const q = await get(t.app, `${DEVICES}?q=board&limit=1`).expect(200);
    expect(q.body).toEqual([['Drive-thru board', 'a4:83:e7:1f:2b:02']]);
    expect(q.headers['x-total-count']).toBe('2');
    const none = await get(t.app, `${DEVICES}?q=zzz`).expect(200);
    expect(none.body).toEqual([]);
    expect(none.headers['x-total-count']).toBe('0');
  });

  test.each(['0', '1001', 'abc', '-1', '1.5', ''])('limit=%s is a 400 naming limit', async (limit) => {
    expectNames(await get(t.app, `${DEVICES}?limit=${limit}`), 'limit');
  });

  test('invalid limit on menus and groups too', async () => {
    expectNames(await get(t.app, `${MENUS}?limit=0`), 'limit');
    expectNames(await get(t.app, `${groupsPath(menuIds.allDay)}?limit=1001`), 'limit');
  });

  test.each([
    'garbage',
    '!!!',
    'o:1',
    Buffer.from('o:-1').toString('base64url'),
    Buffer.from('x:1').toString('base64url'),
    Buffer.from('o:1.5').toString('base64url'),
    Buffer.from('o:1\n').toString('base64url'),
  ])('cursor=%s is a 400 naming cursor', async (cursor) => {
    expectNames(await get(t.app, `${DEVICES}?limit=2&cursor=${encodeURIComponent(cursor)}`), 'cursor');
  });

  test('an empty cursor is a 400 naming cursor', async () => {
    expectNames(await get(t.app, `${DEVICES}?limit=2&cursor=`), 'cursor');
  });

  test('repeated limit is a 400 naming limit', async () => {
    expectNames(await get(t.app, `${DEVICES}?limit=1&limit=2`), 'limit');
  });
});

describe('ETag and Cache-Control', () => {
  test('strong ETag, stable across repeats', async () => {
    const a = await get(t.app, MENUS).expect(200);
    const b = await get(t.app, MENUS).expect(200);
    expect(a.headers.etag).toMatch(/^"[^"]+"$/);
    expect(a.headers.etag!.startsWith('W/')).toBe(false);
    expect(b.headers.etag).toBe(a.headers.etag);
  });

  test('If-None-Match with the current tag: 304, no body', async () => {
    const first = await get(t.app, groupsPath(menuIds.allDay)).expect(200);
    const etag = first.headers.etag!;
    const res = await get(t.app, groupsPath(menuIds.allDay)).set('If-None-Match', etag);
    expect(res.status).toBe(304);
    expect(res.text ?? '').toBe('');
    expect(res.headers.etag).toBe(etag);
    expect(res.headers['cache-control']).toBe('private, max-age=30');
  });

  test('If-None-Match: a list of tags, *, and a weak form of ours all match', async () => {
    const etag = (await get(t.app, DEVICES).expect(200)).headers.etag!;
    for (const header of [`"nope", ${etag}`, `${etag},"other"`, '*', `W/${etag}`, `"a", W/${etag}`]) {
      const res = await get(t.app, DEVICES).set('If-None-Match', header);
      expect(res.status).toBe(304);
      expect(res.text ?? '').toBe('');
    }
  });

  test('If-None-Match with another tag: 200 with the body', async () => {
    const res = await get(t.app, DEVICES).set('If-None-Match', '"not-the-tag", W/"nor-this"').expect(200);
    expect(res.body).toEqual(ANA_DEVICES);
    // A tag without its quotes is not the tag.
    const etag = res.headers.etag!;
    await get(t.app, DEVICES).set('If-None-Match', etag.slice(1, -1)).expect(200);
  });

  test('different queries have different ETags, and a tag of one does not match another', async () => {
    const secondPage = nextLink(await get(t.app, `${DEVICES}?limit=1`).expect(200))!;
    const urls = [DEVICES, `${DEVICES}?format=objects`, `${DEVICES}?format=n8n`, `${DEVICES}?q=board`, `${DEVICES}?limit=1`, secondPage];
    const tags: string[] = [];
    for (const url of urls) tags.push((await get(t.app, url).expect(200)).headers.etag!);
    expect(new Set(tags).size).toBe(urls.length);
    const res = await get(t.app, `${DEVICES}?format=objects`).set('If-None-Match', tags[0]!);
    expect(res.status).toBe(200);
  });

  test('different keys with different data have different ETags', async () => {
    const ana = await get(t.app, DEVICES).expect(200);
    const ben = await get(t.app, DEVICES, keys.ben).expect(200);
    expect(ben.headers.etag).not.toBe(ana.headers.etag);
  });

  test('Cache-Control: private, max-age=30 for menus and groups, 10 for devices (defaults)', async () => {
    const menus = await get(t.app, MENUS).expect(200);
    expect(menus.headers['cache-control']).toBe('private, max-age=30');
    const groups = await get(t.app, groupsPath(menuIds.allDay)).expect(200);
    expect(groups.headers['cache-control']).toBe('private, max-age=30');
    const devices = await get(t.app, DEVICES).expect(200);
    expect(devices.headers['cache-control']).toBe('private, max-age=10');
  });

  test('error responses carry no ETag', async () => {
    const res = await get(t.app, `${DEVICES}?limit=0`).expect(400);
    expect(res.headers.etag).toBeUndefined();
  });
});

describe('menus that are absent or empty', () => {
  test('unknown menu: 404 Menu not found', async () => {
    const res = await get(t.app, groupsPath('00000000-0000-4000-8000-000000000000')).expect(404);
    expect(res.body).toEqual({ message: 'Menu not found' });
    expect(res.headers.etag).toBeUndefined();
  });

  test("another account's menu: 404 Menu not found (no 403 leak)", async () => {
    const res = await get(t.app, groupsPath(menuIds.otherAccount)).expect(404);
    expect(res.body).toEqual({ message: 'Menu not found' });
    // Its own account does see it.
    const zoe = await get(t.app, groupsPath(menuIds.otherAccount), keys.zoe).expect(200);
    expect(zoe.body).toEqual([['Other drinks', groupIds.other]]);
  });

  test('unknown menu in every format, including tree, is 404', async () => {
    for (const format of ['objects', 'n8n', 'tree']) {
      const res = await get(t.app, `${groupsPath(menuIds.otherAccount)}?format=${format}`).expect(404);
      expect(res.body).toEqual({ message: 'Menu not found' });
    }
  });

  test('a group id is not a menu id', async () => {
    await get(t.app, groupsPath(groupIds.drinks)).expect(404, { message: 'Menu not found' });
  });
});

describe('keys and scopes', () => {
  test('missing key: 401 Missing API key on every options endpoint', async () => {
    for (const path of [MENUS, groupsPath(menuIds.allDay), DEVICES]) {
      const res = await request(t.app).get(path).expect(401);
      expect(res.body).toEqual({ message: 'Missing API key' });
    }
  });

  test('unknown or malformed key: 401 Invalid API key', async () => {
    for (const path of [MENUS, DEVICES]) {
      await get(t.app, path, 'sk_test_unknown_key_00000000000').expect(401, { message: 'Invalid API key' });
      await get(t.app, path, 'short').expect(401, { message: 'Invalid API key' });
    }
  });

  test('device options accept Authorization: Bearer and X-API-Key', async () => {
    const bearer = await request(t.app).get(DEVICES).set('Authorization', `Bearer ${keys.ben}`).expect(200);
    const header = await get(t.app, DEVICES, keys.ben).expect(200);
    expect(bearer.body).toEqual(BEN_DEVICES);
    expect(header.body).toEqual(BEN_DEVICES);
  });

  test('menu options take X-API-Key (a Bearer key alone is missing)', async () => {
    const res = await request(t.app).get(MENUS).set('Authorization', `Bearer ${keys.ana}`).expect(401);
    expect(res.body).toEqual({ message: 'Missing API key', details: [{ path: 'X-API-Key', message: expect.stringContaining('X-API-Key header') }] });
  });

  test('menu and group options need menu:read', async () => {
    for (const path of [MENUS, groupsPath(menuIds.allDay)]) {
      await get(t.app, path, keys.anaNoScopes).expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] });
      await get(t.app, path, keys.anaMenuOnly).expect(200);
    }
  });

  test('device options need device:read', async () => {
    await get(t.app, DEVICES, keys.anaNoScopes).expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
    await get(t.app, DEVICES, keys.anaMenuOnly).expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
    await request(t.app)
      .get(DEVICES)
      .set('Authorization', `Bearer ${keys.anaMenuOnly}`)
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
  });

  test('scope is checked before the menu is looked up (no 404 for a key without menu:read)', async () => {
    await get(t.app, groupsPath(menuIds.otherAccount), keys.anaNoScopes).expect(403, {
      message: 'Invalid scopes',
      details: [{ path: 'scope', message: 'needs menu:read' }],
    });
  });
});

describe('sorting and edge cases (extended catalog)', () => {
  const deviceOnlyKey = 'sk_test_cy_device_only_0000000';
  const cyKey = 'sk_test_cy_menus_and_devices_00';
  let e: TestApp;

  beforeAll(async () => {
    const base = catalog();
    const template = base.devices[0]!;
    const device = (id: string, name: string) => ({ ...template, id, name, access: [{ user_id: 'usr_cy', level: 'read' }] });
    const menu = (id: string, name: string, groups: unknown[] = []) => ({ id, account_id: 'acc_cy', name, description: null, tags: [], groups });
    e = await buildTestApp({
      dataset: {
        ...base,
        accounts: [...base.accounts, { id: 'acc_cy', name: 'Cy Co' }],
        users: [...base.users, { id: 'usr_cy', account_id: 'acc_cy', name: 'Cy' }],
        api_keys: [
          ...base.api_keys,
          { id: 'key_cy_dev', user_id: 'usr_cy', name: 'Devices', key: deviceOnlyKey, scopes: ['device:read'] },
          { id: 'key_cy', user_id: 'usr_cy', name: 'All', key: cyKey, scopes: ['device:read', 'menu:read'] },
        ],
        devices: [
          ...base.devices,
          device('c0:00:00:00:00:01', 'Screen 10'),
          device('c0:00:00:00:00:02', 'Screen 2'),
          device('c0:00:00:00:00:03', 'screen 1'),
          device('c0:00:00:00:00:04', 'Éclair case'),
          device('c0:00:00:00:00:05', 'Donut shelf'),
          device('C0:00:00:00:00:06', 'eclair bar'),
        ],
        menus: [
          ...base.menus,
          menu('m-10', 'Menu board 10'),
          menu('m-2', 'Menu board 2'),
          menu('m-1', 'menu board 1'),
          menu('m-b', 'specials'),
          menu('m-a', 'Specials'),
          menu('m-z', 'Zucchini'),
          menu('m-apple', 'apple'),
          menu('m-empty', 'Empty menu'),
        ],
      },
    });
  });
  afterAll(async () => e.close());

  test('menus: case-insensitive, numeric-aware, value tie-break', async () => {
    const res = await get(e.app, MENUS, cyKey).expect(200);
    expect(res.body).toEqual([
      ['apple', 'm-apple'],
      ['Empty menu', 'm-empty'],
      ['menu board 1', 'm-1'],
      ['Menu board 2', 'm-2'],
      ['Menu board 10', 'm-10'],
      ['Specials', 'm-a'],
      ['specials', 'm-b'],
      ['Zucchini', 'm-z'],
    ]);
  });

  test('devices: case- and accent-insensitive, numeric-aware', async () => {
    const res = await get(e.app, DEVICES, cyKey).expect(200);
    expect(res.body).toEqual([
      ['Donut shelf', 'c0:00:00:00:00:05'],
      ['eclair bar', 'c0:00:00:00:00:06'],
      ['Éclair case', 'c0:00:00:00:00:04'],
      ['screen 1', 'c0:00:00:00:00:03'],
      ['Screen 2', 'c0:00:00:00:00:02'],
      ['Screen 10', 'c0:00:00:00:00:01'],
    ]);
  });

  test('q=eclair finds both spellings', async () => {
    const res = await get(e.app, `${DEVICES}?q=ECLAIR`, cyKey).expect(200);
    expect(res.body).toEqual([
      ['eclair bar', 'c0:00:00:00:00:06'],
      ['Éclair case', 'c0:00:00:00:00:04'],
    ]);
  });

  test('a menu with no groups is [] (not 404) in every format', async () => {
    const res = await get(e.app, groupsPath('m-empty'), cyKey).expect(200);
    expect(res.body).toEqual([]);
    expect(res.headers['x-total-count']).toBe('0');
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    await get(e.app, `${groupsPath('m-empty')}?format=objects`, cyKey).expect(200, []);
    await get(e.app, `${groupsPath('m-empty')}?format=tree`, cyKey).expect(200, []);
    await get(e.app, `${groupsPath('m-empty')}?format=n8n`, cyKey).expect(200, { results: [] });
  });

  test('a device-only key may not read menu options', async () => {
    await get(e.app, MENUS, deviceOnlyKey).expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] });
    await get(e.app, groupsPath('m-empty'), deviceOnlyKey).expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs menu:read' }] });
    await request(e.app).get(DEVICES).set('Authorization', `Bearer ${deviceOnlyKey}`).expect(200);
  });
});

describe('caching', () => {
  const renamed = (names: Record<string, string>, deviceNames: Record<string, string> = {}) => {
    const doc = catalog();
    for (const menu of doc.menus) if (names[menu.id]) menu.name = names[menu.id]!;
    for (const device of doc.devices) if (deviceNames[device.id]) device.name = deviceNames[device.id]!;
    return doc;
  };

  test('X-Cache is MISS, then HIT', async () => {
    const c = await buildTestApp({ dataset: catalog() });
    try {
      const first = await get(c.app, MENUS).expect(200);
      expect(first.headers['x-cache']).toBe('MISS');
      const second = await get(c.app, MENUS).expect(200);
      expect(second.headers['x-cache']).toBe('HIT');
      expect(second.headers.etag).toBe(first.headers.etag);
      // Another format of the same list is rendered from the same cached list.
      const objects = await get(c.app, `${MENUS}?format=objects`).expect(200);
      expect(objects.headers['x-cache']).toBe('HIT');
      // Another key has its own entry.
      const zoe = await get(c.app, MENUS, keys.zoe).expect(200);
      expect(zoe.headers['x-cache']).toBe('MISS');
    } finally {
      await c.close();
    }
  });

  test('after an import, options show the old name within the TTL and the new one after it', async () => {
    const c = await buildTestApp({ dataset: catalog() });
    try {
      const before = await get(c.app, MENUS).expect(200);
      expect(before.body).toEqual(ANA_MENUS);
      await importDataset(c.db, renamed({ [menuIds.allDay]: 'Zz all day' }), { nowMs: c.clock.now() });
      c.clock.advance(29_999);
      const within = await get(c.app, MENUS).expect(200);
      expect(within.headers['x-cache']).toBe('HIT');
      expect(within.body).toEqual(ANA_MENUS);
      c.clock.advance(2); // 30 001 ms since the load: embedded mode refetches at once (no stale-while-revalidate)
      const after = await get(c.app, MENUS).expect(200);
      expect(after.headers['x-cache']).toBe('MISS');
      expect(after.body).toEqual([
        ['Breakfast', menuIds.breakfast],
        ['Zz all day', menuIds.allDay],
      ]);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      // The old tag no longer matches.
      await get(c.app, MENUS).set('If-None-Match', before.headers.etag!).expect(200);
    } finally {
      await c.close();
    }
  });

  test('embedded mode: exactly at the TTL the list is rebuilt in the request (MISS), so an import shows within the TTL', async () => {
    const c = await buildTestApp({ dataset: catalog() });
    try {
      const before = await get(c.app, groupsPath(menuIds.allDay)).expect(200);
      const etag = before.headers.etag!;
      const doc = catalog();
      doc.menus[0]!.groups[1]!.name = 'Sandwiches';
      await importDataset(c.db, doc, { nowMs: c.clock.now() });
      c.clock.advance(30_000); // exactly the TTL: no longer fresh
      const stale = await get(c.app, groupsPath(menuIds.allDay)).expect(200);
      expect(stale.headers['x-cache']).toBe('MISS');
      expect(stale.body).toEqual([...ALL_DAY_GROUPS.slice(0, 3), ['Sandwiches', groupIds.burgers]]);
      const fresh = await get(c.app, groupsPath(menuIds.allDay)).expect(200);
      expect(fresh.headers['x-cache']).toBe('HIT');
      expect(fresh.body).toEqual([...ALL_DAY_GROUPS.slice(0, 3), ['Sandwiches', groupIds.burgers]]);
      expect(fresh.headers.etag).not.toBe(etag);
      // A client holding the old tag gets the new body, not a 304.
      await get(c.app, groupsPath(menuIds.allDay)).set('If-None-Match', etag).expect(200);
    } finally {
      await c.close();
    }
  });

  test('device options follow DEVICE_CACHE_TTL_MS (10 s by default)', async () => {
    const c = await buildTestApp({ dataset: catalog() });
    try {
      await get(c.app, DEVICES, keys.ben).expect(200, BEN_DEVICES);
      await importDataset(c.db, renamed({}, { 'A4:83:E7:1F:2B:04': 'Grill screen' }), { nowMs: c.clock.now() });
      c.clock.advance(9_999);
      const within = await get(c.app, DEVICES, keys.ben).expect(200);
      expect(within.headers['x-cache']).toBe('HIT');
      expect(within.body).toEqual(BEN_DEVICES);
      c.clock.advance(10_002);
      const after = await get(c.app, DEVICES, keys.ben).expect(200);
      expect(after.headers['x-cache']).toBe('MISS');
      expect(after.body).toEqual([
        ['Café window', 'a4:83:e7:1f:2b:05'],
        ['Front counter', 'a4:83:e7:1f:2b:01'],
        ['Grill screen', 'a4:83:e7:1f:2b:04'],
      ]);
    } finally {
      await c.close();
    }
  });

  test('Cache-Control follows the configured TTLs', async () => {
    const c = await buildTestApp({ dataset: catalog(), env: { OPTIONS_CACHE_TTL_MS: '5000', DEVICE_CACHE_TTL_MS: '120000' } });
    try {
      const menus = await get(c.app, MENUS).expect(200);
      expect(menus.headers['cache-control']).toBe('private, max-age=5');
      const devices = await get(c.app, DEVICES).expect(200);
      expect(devices.headers['cache-control']).toBe('private, max-age=120');
      // And the options cache really uses the shorter TTL.
      await importDataset(c.db, renamed({ [menuIds.breakfast]: 'Brunch' }), { nowMs: c.clock.now() });
      c.clock.advance(10_001);
      const after = await get(c.app, MENUS).expect(200);
      expect(after.body).toEqual([
        ['All day', menuIds.allDay],
        ['Brunch', menuIds.breakfast],
      ]);
    } finally {
      await c.close();
    }
  });
});

describe('Link with PUBLIC_URL', () => {
  test('the next-page link is absolute on PUBLIC_URL', async () => {
    const c = await buildTestApp({ dataset: catalog(), env: { PUBLIC_URL: 'https://connector.example.com/' } });
    try {
      const res = await get(c.app, `${groupsPath(menuIds.allDay)}?limit=2&q=drinks`).expect(200);
      const m = /^<([^>]+)>; rel="next"$/.exec(res.headers.link ?? '');
      expect(m).not.toBeNull();
      const url = new URL(m![1]!);
      expect(url.origin).toBe('https://connector.example.com');
      expect(url.pathname).toBe(groupsPath(menuIds.allDay));
      expect(url.searchParams.get('q')).toBe('drinks');
    } finally {
      await c.close();
    }
  });
});

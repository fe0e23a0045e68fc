import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import BetterSqlite3 from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectSameOptions } from '../helpers/options.js';
import { testEngine } from '../helpers/engine.js';
import { hashKey } from '../../src/auth/keys.js';
import { openDatabase } from '../../src/db/database.js';
import { migrations, renderMigration } from '../../src/db/migrations.js';
import { menuGroupRows } from '../../src/db/group-rows.js';
import { resources } from '../../src/options/resources.js';
import { groupsServedFromDatabase } from '../../src/options/database-group-options.js';
import { encodeCursor, type OptionQuery } from '../../src/options/render.js';
import { renderOptions } from '../../src/options/pager.js';
import type { OptionSource } from '../../src/manifest/schema.js';
import type { Principal } from '../../src/sources/types.js';

/**
 * docs/options.md, "Big accounts": group dropdowns answered by the database give the same bytes,
 * ETag, X-Total-Count and Link as the in-memory list for the same data: every format, search,
 * counts, cursors, tree levels, the errors; over HTTP, on the suite's engine.
 */

const KEY = 'sk_test_group_dropdown_db_000000000';
const OTHER_KEY = 'sk_test_group_dropdown_other_00000';
const MENU = 'AbCdEf00-0000-4000-8000-000000000001';
const OTHER_MENU = 'abcdef00-0000-4000-8000-000000000002';
const names = ['Drinks', 'Café', 'cafe', 'CAFÉ', 'Board 2', 'board 10', 'Ångström', 'Straße', 'Smith’s', 'a_b', '%', 'Zeta'];

interface GroupDoc {
  id: string;
  name: string;
  description: null;
  tags: string[];
  groups: GroupDoc[];
  items: [];
}

/** A tree several levels deep, children counts varying, ids in mixed case. */
function tree(prefix: string, depth: number, width: number): GroupDoc[] {
  return Array.from({ length: width }, (_, i) => {
    const id = `${i % 2 ? 'G' : 'g'}-${prefix}${i}`;
    const children = depth > 0 && i % 3 !== 2 ? tree(`${prefix}${i}.`, depth - 1, (i % 4) + 1) : [];
    return { id, name: `${names[(prefix.length + i) % names.length]} ${prefix}${i}`, description: null, tags: [], groups: children, items: [] };
  });
}

function dataset(groups = tree('', 4, 12)) {
  return {
    accounts: [
      { id: 'acc_g', name: 'Groups' },
      { id: 'acc_o', name: 'Other' },
    ],
    users: [
      { id: 'usr_g', account_id: 'acc_g', name: 'U' },
      { id: 'usr_o', account_id: 'acc_o', name: 'O' },
    ],
    api_keys: [
      { id: 'key_g', user_id: 'usr_g', name: 'K', scopes: ['menu:read'], key: KEY },
      { id: 'key_o', user_id: 'usr_o', name: 'K2', scopes: ['menu:read'], key: OTHER_KEY },
    ],
    devices: [],
    menus: [
      { id: MENU, account_id: 'acc_g', name: 'Big', description: null, tags: [], groups },
      { id: OTHER_MENU, account_id: 'acc_o', name: 'Theirs', description: null, tags: [], groups: tree('o', 1, 2) },
    ],
  };
}

const principal: Principal = {
  keyHash: hashKey(KEY),
  key: KEY,
  scopes: new Set(['menu:read']),
  keyId: null,
  keyName: null,
  userId: 'usr_g',
  accountId: 'acc_g',
  accountName: null,
};

let t: TestApp;
let source: OptionSource;
let allIds: string[];
beforeAll(async () => {
  t = await buildTestApp({ dataset: dataset(), env: { OPTIONS_CACHE_TTL_MS: '0' } });
  source = t.services.manifest.optionSources.find((s) => s.resource === 'groups')!;
  allIds = menuGroupRows(MENU, dataset().menus[0]!.groups).map((r) => r.id);
});
afterAll(async () => t.close());

function pathOf(query: OptionQuery, menuId = MENU): string {
  const params = new URLSearchParams();
  if (query.format !== 'tuples') params.set('format', query.format);
  if (query.q !== undefined) params.set('q', query.q);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.offset > 0) params.set('cursor', encodeCursor(query.offset));
  if (query.parent !== undefined) params.set('parent', query.parent);
  const text = params.toString();
  return `/v1/menus/${menuId}/groups/options${text ? `?${text}` : ''}`;
}

/** The in-memory answer: the whole list built and rendered as before the database path existed. */
async function expected(query: OptionQuery) {
  const { list } = await t.services.options.list(source, principal, { menuId: MENU });
  return await renderOptions(list, query);
}

async function same(query: OptionQuery): Promise<string | null> {
  const load = jest.spyOn(resources.groups!, 'load');
  const res = await request(t.app).get(pathOf(query)).set('X-API-Key', KEY).expect(200);
  expect(load).not.toHaveBeenCalled();
  load.mockRestore();
  const want = await expected(query);
  expectSameOptions(res, want);
  return want.nextCursor;
}

const queries: Array<Partial<OptionQuery>> = [
  {},
  { limit: 1 },
  { limit: 7 },
  { limit: 1000 },
  { q: 'cafe' },
  { q: 'CAFÉ', limit: 5 },
  { q: 'board 1' },
  { q: '›' },
  { q: 'drinks › ' },
  { q: 'zzz' },
  { q: 'STRASSE' },
  { q: 'straße' },
  { q: '%' },
  { q: '_' },
  { q: 'smith’s' },
  { format: 'objects', limit: 11 },
  { format: 'n8n', limit: 13, q: 'a' },
  { format: 'n8n' },
  { limit: 50, offset: 100 },
  { limit: 5, offset: 9999 },
  { format: 'tree' },
  { format: 'tree', q: 'cafe' },
  { format: 'tree', limit: 2 },
  { format: 'tree', parent: 'g-0' },
  { format: 'tree', parent: 'G-0' },
  { format: 'tree', parent: 'g-1.1', q: 'zeta' },
  { format: 'tree', parent: 'g-0.0.0.0' },
  { format: 'tree', parent: 'g-8' },
];

describe('database path', () => {
  test('the shipped group source is served from the database; the fixture is big enough to page', () => {
    expect(groupsServedFromDatabase(source)).toBe(true);
    expect(allIds.length).toBeGreaterThan(150);
  });

  test.each(queries.map((q) => [JSON.stringify(q), q] as const))('%s: same answer as the in-memory list', async (_name, partial) => {
    await same({ format: 'tuples', offset: 0, ...partial });
  });

  test.each([[undefined], ['cafe'], ['1']])('cursors (q=%s) walk the same pages, then the same pages out of order', async (q) => {
    let offset = 0;
    let pages = 0;
    for (;;) {
      const next = await same({ format: 'tuples', q, limit: 17, offset });
      pages += 1;
      if (next === null) break;
      offset += 17;
    }
    expect(pages).toBeGreaterThan(1);
    for (const o of [34, 5, 151]) await same({ format: 'objects', q, limit: 17, offset: o });
  });

  test("errors as before: an unknown parent is a 400 naming parent; another account's or an unknown menu is a 404", async () => {
    const bad = await request(t.app)
      .get(pathOf({ format: 'tree', offset: 0, parent: 'no-such-group' }))
      .set('X-API-Key', KEY)
      .expect(400);
    expect(JSON.stringify(bad.body)).toContain('parent must be the id of a group of this menu');
    const theirs = await request(t.app)
      .get(pathOf({ format: 'tuples', offset: 0 }, OTHER_MENU))
      .set('X-API-Key', KEY)
      .expect(404);
    expect(theirs.body).toEqual({ message: 'Menu not found' });
    await request(t.app)
      .get(pathOf({ format: 'tuples', offset: 0 }, 'abcdef00-0000-4000-8000-00000000ffff'))
      .set('X-API-Key', KEY)
      .expect(404);
    // The owner sees theirs (menu ids compare case-insensitively).
    const own = await request(t.app)
      .get(pathOf({ format: 'tuples', offset: 0 }, OTHER_MENU.toUpperCase()))
      .set('X-API-Key', OTHER_KEY)
      .expect(200);
    expect(own.headers['x-total-count']).toBe(String(menuGroupRows(OTHER_MENU, dataset().menus[1]!.groups).length));
  });
});

describe('rows follow the menu', () => {
  test("a re-import rewrites a menu's rows; a pruned menu takes its rows with it", async () => {
    const app = await buildTestApp({ dataset: dataset(), env: { OPTIONS_CACHE_TTL_MS: '0' } });
    try {
      const count = async () => Number(await app.value('SELECT count(*) FROM menu_groups WHERE menu_id = ?', MENU));
      expect(await count()).toBe(allIds.length);
      const { importDataset } = await import('../../src/dataset/import.js');
      await importDataset(app.db, dataset(tree('n', 0, 3)), { nowMs: app.clock.now() });
      expect(await count()).toBe(3);
      const res = await request(app.app).get(`/v1/menus/${MENU}/groups/options`).set('X-API-Key', KEY).expect(200);
      expect((res.body as Array<[string, string]>).map(([, id]) => id)).toEqual(['g-n0', 'G-n1', 'g-n2']);
      const pruned = { ...dataset(), menus: [dataset().menus[1]!] };
      await importDataset(app.db, pruned, { nowMs: app.clock.now(), prune: true });
      expect(await count()).toBe(0);
    } finally {
      await app.close();
    }
  });
});

const onSqlite = testEngine === 'sqlite' ? test : test.skip;

describe('migration 10', () => {
  onSqlite('fills menu_groups from the menus stored before it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'menu-groups-'));
    try {
      const file = join(dir, 'old.db');
      const raw = new BetterSqlite3(file);
      raw.pragma('foreign_keys = ON');
      for (let i = 0; i < 9; i++) raw.exec(renderMigration(i, 'sqlite'));
      raw.pragma('user_version = 9');
      const groups = tree('', 2, 4);
      raw.prepare("INSERT INTO accounts (id, name) VALUES ('acc_g', 'Groups')").run();
      raw
        .prepare("INSERT INTO menus (id, account_id, position, name, description, tags, groups_json, revision) VALUES (?, 'acc_g', 0, 'M', NULL, '[]', ?, 1)")
        .run(MENU, JSON.stringify(groups));
      raw.close();
      expect(migrations.length).toBeGreaterThanOrEqual(10);
      const db = await openDatabase({ path: file });
      const rows = await db.kysely.selectFrom('menu_groups').selectAll().orderBy('position').execute();
      await db.close();
      expect(rows).toEqual(menuGroupRows(MENU, groups));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

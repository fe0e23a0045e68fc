import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { Express } from 'express';
import { ManualClock } from '../helpers/app.js';
import { catalog, groupIds, keys, menuIds } from '../fixtures/catalog.js';
import { loadConfig } from '../../src/config.js';
import type { Db } from '../../src/db/database.js';
import { openTestDatabase } from '../helpers/engine.js';
import { importDataset } from '../../src/dataset/import.js';
import { createLogger } from '../../src/logger.js';
import { buildServices } from '../../src/services.js';
import { createApp } from '../../src/app.js';
import { connectorManifestPath, loadManifest, ManifestError, parseManifest } from '../../src/manifest/load.js';
import type { Manifest } from '../../src/manifest/schema.js';

/**
 * docs/options.md, last point: option sources are declared in manifests/ and validated at start;
 * a new option source is a manifest entry, not code. These tests add sources that exist only
 * in a manifest document, and break the manifest in every way the validator must catch.
 */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** The shipped manifest as a plain document, fresh each call. */
const shipped = (): Json => JSON.parse(readFileSync(connectorManifestPath, 'utf8'));

const item = {
  latte: 'aaaaaaaa-0000-4000-8000-000000000002',
  latte12: 'aaaaaaaa-0000-4000-8000-000000000003',
  latte16: 'aaaaaaaa-0000-4000-8000-000000000004',
  doubleShot: 'aaaaaaaa-0000-4000-8000-000000000001',
  lemonade: 'aaaaaaaa-0000-4000-8000-000000000005',
  burger: 'aaaaaaaa-0000-4000-8000-000000000006',
};

/** The example: the items of a group as a dropdown, declared only here. */
const groupItemsSource = {
  id: 'group_items',
  title: 'Item',
  description: 'The items of one group, with their variants.',
  path: '/v1/groups/{groupId}/items/options',
  resource: 'items',
  scope: 'menu:read',
  params: [{ name: 'groupId', title: 'Group', optionsFrom: 'menu_groups' }],
  label: '{name} — ${price}',
  value: 'id',
  order: 'source',
  tree: { label: '{name}' },
};

/** More configuration-only sources: a filter, label order, a fallback, a paging cap, no search. */
const inStockItemsSource = {
  id: 'group_items_in_stock',
  title: 'Item in stock',
  path: '/v1/groups/{groupId}/items/in-stock/options',
  resource: 'items',
  scope: 'menu:read',
  params: [{ name: 'groupId', title: 'Group' }],
  label: '{name} ({price|no price})',
  value: 'id',
  order: 'label',
  filter: { inStock: true },
  paging: { maxLimit: 2 },
};

const onlineDevicesSource = {
  id: 'online_devices',
  title: 'Online device',
  path: '/v1/devices/online/options',
  resource: 'devices',
  scope: 'device:read',
  label: '{name} ({timezone})',
  value: 'id',
  order: 'label',
  filter: { status: 'online' },
  search: false,
};

interface ManifestApp {
  app: Express;
  db: Db;
  clock: ManualClock;
  close(): Promise<void>;
}

/** The real app, built the way main.ts builds it, but with a manifest given as a value. */
async function appWith(manifest: Manifest): Promise<ManifestApp> {
  const config = loadConfig({ LOG_LEVEL: 'silent', DATABASE_PATH: ':memory:' });
  const clock = new ManualClock();
  const { db, drop } = await openTestDatabase();
  await importDataset(db, catalog(), { nowMs: clock.now() });
  const services = buildServices({ config, logger: createLogger(config.LOG_LEVEL), clock, db, manifest });
  return {
    app: createApp(services),
    db,
    clock,
    async close() {
      await services.close();
      await db.close();
      await drop();
    },
  };
}

const get = (app: Express, path: string, key: string = keys.ana) => request(app).get(path).set('X-API-Key', key);
const itemsPath = (groupId: string) => `/v1/groups/${groupId}/items/options`;

describe('a new option source is configuration, not code', () => {
  let m: ManifestApp;
  beforeAll(async () => {
    const doc = shipped();
    doc.optionSources.push(groupItemsSource, inStockItemsSource, onlineDevicesSource);
    m = await appWith(parseManifest(doc, 'test-manifest.json'));
  });
  afterAll(async () => m.close());

  test('the shipped manifest does not have the endpoint', async () => {
    const plain = await appWith(loadManifest());
    try {
      await get(plain.app, itemsPath(groupIds.hot)).expect(404, { message: 'Not found' });
    } finally {
      await plain.close();
    }
  });

  test('items of a group: label from the template, value the item id, source order depth first', async () => {
    const res = await get(m.app, itemsPath(groupIds.hot)).expect(200);
    expect(res.body).toEqual([
      ['Latte — $4.25', item.latte],
      ['Latte, 12 oz — $4.25', item.latte12],
      ['Latte, 16 oz — $4.95', item.latte16],
    ]);
    expect(res.headers['x-total-count']).toBe('3');
    expect(res.headers.etag).toMatch(/^"[^"]+"$/);
    expect(res.headers['cache-control']).toBe('private, max-age=30');
  });

  test('a null field renders as empty text; integers print without decimals', async () => {
    await get(m.app, itemsPath(groupIds.espresso)).expect(200, [['Double shot — $', item.doubleShot]]);
    await get(m.app, itemsPath(groupIds.burgers)).expect(200, [['Classic burger — $11', item.burger]]);
  });

  test('only the group’s own items, not those of its subgroups', async () => {
    await get(m.app, itemsPath(groupIds.drinks)).expect(200, [['Lemonade — $4.25', item.lemonade]]);
    await get(m.app, itemsPath(groupIds.eggs)).expect(200, []);
  });

  test('every format, q, paging and ETag work on the new source', async () => {
    const objects = await get(m.app, `${itemsPath(groupIds.hot)}?format=objects&q=OZ`).expect(200);
    expect(objects.body).toEqual([
      { label: 'Latte, 12 oz — $4.25', value: item.latte12 },
      { label: 'Latte, 16 oz — $4.95', value: item.latte16 },
    ]);
    const n8n = await get(m.app, `${itemsPath(groupIds.hot)}?format=n8n&limit=2`).expect(200);
    expect(n8n.body.results).toHaveLength(2);
    expect(typeof n8n.body.paginationToken).toBe('string');
    const rest = await get(m.app, `${itemsPath(groupIds.hot)}?format=n8n&limit=2&cursor=${n8n.body.paginationToken}`).expect(200);
    expect(rest.body).toEqual({ results: [{ name: 'Latte, 16 oz — $4.95', value: item.latte16 }] });
    const tree = await get(m.app, `${itemsPath(groupIds.hot)}?format=tree`).expect(200);
    expect(tree.body).toEqual([['Latte', item.latte, null, true]]);
    const children = await get(m.app, `${itemsPath(groupIds.hot)}?format=tree&parent=${item.latte}`).expect(200);
    expect(children.body).toEqual([
      ['Latte, 12 oz', item.latte12, null, false],
      ['Latte, 16 oz', item.latte16, null, false],
    ]);
    const etag = tree.headers.etag!;
    await get(m.app, `${itemsPath(groupIds.hot)}?format=tree`)
      .set('If-None-Match', etag)
      .expect(304);
  });

  test('keys, scopes and access apply to the new source', async () => {
    await request(m.app).get(itemsPath(groupIds.hot)).expect(401, { message: 'Missing API key' });
    await get(m.app, itemsPath(groupIds.hot), keys.anaNoScopes).expect(403, {
      message: 'Invalid scopes',
      details: [{ path: 'scope', message: 'needs menu:read' }],
    });
    await get(m.app, itemsPath(groupIds.hot), keys.anaMenuOnly).expect(200);
    // Another account's group, and an unknown one, are absent.
    const other = await get(m.app, itemsPath(groupIds.other)).expect(404);
    expect(typeof other.body.message).toBe('string');
    await get(m.app, itemsPath('no-such-group')).expect(404);
    await get(m.app, itemsPath(groupIds.other), keys.zoe).expect(200, []);
  });

  test('filter, label order, fallback text and the paging cap come from the manifest', async () => {
    const res = await get(m.app, `/v1/groups/${groupIds.hot}/items/in-stock/options`).expect(200);
    // Latte, 16 oz is out of stock; the rest sorted by label.
    expect(res.body).toEqual([
      ['Latte (4.25)', item.latte],
      ['Latte, 12 oz (4.25)', item.latte12],
    ]);
    await get(m.app, `/v1/groups/${groupIds.espresso}/items/in-stock/options`).expect(200, [['Double shot (no price)', item.doubleShot]]);
    const over = await get(m.app, `/v1/groups/${groupIds.hot}/items/in-stock/options?limit=3`).expect(400);
    expect(over.body.message).toContain('limit');
    await get(m.app, `/v1/groups/${groupIds.hot}/items/in-stock/options?limit=2`).expect(200);
    // No tree declared: format=tree is not offered.
    const tree = await get(m.app, `/v1/groups/${groupIds.hot}/items/in-stock/options?format=tree`).expect(400);
    expect(tree.body.message).toContain('format');
  });

  test('a device source with a filter, device scope and headers, and search off', async () => {
    // Ana: Front counter (30 s) is online; Café window (10 min) and the others are not.
    const res = await get(m.app, '/v1/devices/online/options').expect(200);
    expect(res.body).toEqual([['Front counter (America/Chicago)', 'a4:83:e7:1f:2b:01']]);
    expect(res.headers['cache-control']).toBe('private, max-age=10');
    await request(m.app).get('/v1/devices/online/options').set('Authorization', `Bearer ${keys.ben}`).expect(200);
    await get(m.app, '/v1/devices/online/options', keys.anaMenuOnly).expect(403, {
      message: 'Invalid scopes',
      details: [{ path: 'scope', message: 'needs device:read' }],
    });
    // search: false — q is an unknown parameter and so ignored.
    await get(m.app, '/v1/devices/online/options?q=zzz').expect(200, res.body);
  });

  test('the shipped sources still work beside the new ones', async () => {
    await get(m.app, '/v1/menus/options').expect(200, [
      ['All day', menuIds.allDay],
      ['Breakfast', menuIds.breakfast],
    ]);
    const groups = await get(m.app, `/v1/menus/${menuIds.allDay}/groups/options`).expect(200);
    expect(groups.body).toHaveLength(4);
  });
});

describe('manifest validation', () => {
  const file = 'manifests/connector.json';

  /** The shipped manifest with one more source (index 3) patched by `patch`. */
  function withSource(source: Json): Json {
    const doc = shipped();
    expect(doc.optionSources).toHaveLength(3);
    doc.optionSources.push(source);
    return doc;
  }

  /** Parses and returns the ManifestError's message; fails if it parses. */
  function errorOf(doc: Json, name = file): string {
    let caught: unknown;
    try {
      parseManifest(doc, name);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ManifestError);
    const message = (caught as Error).message;
    expect(message).not.toMatch(/[\r\n]/);
    expect(message).toContain(name);
    return message;
  }

  test('the shipped manifest is valid and declares the three contract sources', () => {
    const manifest = loadManifest();
    expect(manifest.optionSources.map((s) => [s.id, s.path])).toEqual([
      ['menus', '/v1/menus/options'],
      ['menu_groups', '/v1/menus/{menuId}/groups/options'],
      ['devices', '/v1/devices/options'],
    ]);
    expect(manifest.optionSources.map((s) => s.scope)).toEqual(['menu:read', 'menu:read', 'device:read']);
  });

  test('the extra sources are valid', () => {
    expect(() => parseManifest(withSource(groupItemsSource), file)).not.toThrow();
    expect(() => parseManifest(withSource(inStockItemsSource), file)).not.toThrow();
    expect(() => parseManifest(withSource(onlineDevicesSource), file)).not.toThrow();
  });

  test('unknown resource', () => {
    const message = errorOf(withSource({ ...groupItemsSource, resource: 'widgets' }));
    expect(message).toContain('optionSources[3].resource');
  });

  test('label template with an unknown field {nme}', () => {
    const message = errorOf(withSource({ ...groupItemsSource, label: '{nme} — ${price}' }));
    expect(message).toContain('optionSources[3].label');
    expect(message).toContain('nme');
  });

  test('unknown field in a fallback placeholder {nme|x} and in the tree label', () => {
    expect(errorOf(withSource({ ...groupItemsSource, label: '{nme|none}' }))).toContain('optionSources[3].label');
    const tree = errorOf(withSource({ ...groupItemsSource, tree: { label: '{title}' } }));
    expect(tree).toContain('optionSources[3].tree.label');
    expect(tree).toContain('title');
  });

  test('unknown value field and unknown filter field', () => {
    expect(errorOf(withSource({ ...groupItemsSource, value: 'uuid' }))).toContain('optionSources[3].value');
    const filter = errorOf(withSource({ ...groupItemsSource, filter: { colour: 'red' } }));
    expect(filter).toContain('optionSources[3].filter.colour');
  });

  test('missing {groupId} in the path', () => {
    const message = errorOf(withSource({ ...groupItemsSource, path: '/v1/groups/items/options', params: [] }));
    expect(message).toContain('optionSources[3].path');
    expect(message).toContain('groupId');
  });

  test('a path parameter the resource does not have, or one that is not described', () => {
    const foreign = errorOf(withSource({ ...groupItemsSource, path: '/v1/groups/{groupId}/{size}/items/options' }));
    expect(foreign).toContain('optionSources[3].path');
    expect(foreign).toContain('size');
    const undescribed = errorOf(withSource({ ...groupItemsSource, params: [] }));
    expect(undescribed).toContain('optionSources[3].params');
    expect(undescribed).toContain('groupId');
  });

  const menusAgain = { ...onlineDevicesSource, id: 'menus_again', resource: 'menus', scope: 'menu:read', filter: {}, label: '{name}' };

  test('duplicate path', () => {
    const message = errorOf(withSource({ ...menusAgain, path: '/v1/menus/options' }));
    expect(message).toContain('optionSources[3].path');
    expect(message).toContain('duplicate path');
  });

  test('a path that differs only in case or in parameter names is a duplicate (Express would never reach it)', () => {
    const cased = errorOf(withSource({ ...menusAgain, path: '/v1/MENUS/options' }));
    expect(cased).toContain('optionSources[3].path');
    expect(cased).toContain('duplicate path');
    const renamed = errorOf(withSource({ ...groupItemsSource, path: '/v1/menus/{groupId}/groups/options' }));
    expect(renamed).toContain('optionSources[3].path');
    expect(renamed).toContain('duplicate path');
  });

  test('a path that would take over a built-in endpoint is refused (must end in /options)', () => {
    for (const path of ['/v1/menus', '/v1/groups', '/v1/me', '/v1/hooks']) {
      expect(errorOf(withSource({ ...menusAgain, path }))).toContain('optionSources[3].path');
    }
    expect(errorOf(withSource({ ...groupItemsSource, path: '/v1/hooks/{groupId}' }))).toContain('optionSources[3].path');
  });

  test('duplicate id', () => {
    const message = errorOf(withSource({ ...groupItemsSource, id: 'devices' }));
    expect(message).toContain('optionSources[3].id');
    expect(message).toContain('duplicate id');
  });

  test('tree on a non-tree resource', () => {
    const message = errorOf(withSource({ ...onlineDevicesSource, tree: { label: '{name}' } }));
    expect(message).toContain('optionSources[3].tree');
  });

  test('wrong scope', () => {
    expect(errorOf(withSource({ ...groupItemsSource, scope: 'device:read' }))).toContain('optionSources[3].scope');
    expect(errorOf(withSource({ ...onlineDevicesSource, scope: 'menu:read' }))).toContain('optionSources[3].scope');
    expect(errorOf(withSource({ ...groupItemsSource, scope: 'hooks:write' }))).toContain('optionSources[3].scope');
    expect(errorOf(withSource({ ...groupItemsSource, scope: 'admin' }))).toContain('optionSources[3].scope');
  });

  test('other shape errors name their path', () => {
    expect(errorOf(withSource({ ...groupItemsSource, order: 'random' }))).toContain('optionSources[3].order');
    expect(errorOf(withSource({ ...groupItemsSource, paging: { maxLimit: 5000 } }))).toContain('optionSources[3].paging.maxLimit');
    expect(errorOf(withSource({ ...groupItemsSource, path: 'groups/{groupId}/items' }))).toContain('optionSources[3].path');
    expect(errorOf(withSource({ ...groupItemsSource, id: 'Group Items' }))).toContain('optionSources[3].id');
    const { label: _label, ...noLabel } = groupItemsSource;
    expect(errorOf(withSource(noLabel))).toContain('optionSources[3].label');
    const typo = errorOf(withSource({ ...groupItemsSource, lable: '{name}' }));
    expect(typo).toContain('optionSources[3]');
    expect(typo).toContain('lable');
  });

  test('top-level errors name their path', () => {
    const doc = shipped();
    doc.version = 'one';
    expect(errorOf(doc)).toContain(' version');
    const none = shipped();
    delete none.optionSources;
    expect(errorOf(none)).toContain('optionSources');
    expect(errorOf([])).toContain(file);
  });

  test('the error names whichever file it is given', () => {
    const message = errorOf(withSource({ ...groupItemsSource, label: '{nme}' }), '/etc/connector/custom.json');
    expect(message).toContain('/etc/connector/custom.json');
    expect(message).toContain('optionSources[3].label');
  });
});

describe('loadManifest(path)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'manifest-test-'));
  });
  afterAll(async () => rmSync(dir, { recursive: true, force: true }));

  function loadError(file: string): string {
    let caught: unknown;
    try {
      loadManifest(file);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ManifestError);
    const message = (caught as Error).message;
    expect(message).not.toMatch(/[\r\n]/);
    expect(message).toContain(file);
    return message;
  }

  test('a valid file loads', () => {
    const file = join(dir, 'ok.json');
    const doc = shipped();
    doc.optionSources.push(groupItemsSource);
    writeFileSync(file, JSON.stringify(doc, null, 2));
    expect(loadManifest(file).optionSources.map((s) => s.id)).toEqual(['menus', 'menu_groups', 'devices', 'group_items']);
  });

  test('bad JSON: one line naming the file', () => {
    const file = join(dir, 'bad-json.json');
    writeFileSync(file, '{\n  "name": "x",\n  oops\n}\n');
    loadError(file);
  });

  test('an empty file: one line naming the file', () => {
    const file = join(dir, 'empty.json');
    writeFileSync(file, '');
    loadError(file);
  });

  test('a missing file: one line naming the file', () => {
    loadError(join(dir, 'does-not-exist.json'));
  });

  test('a schema error: one line naming the file and the JSON path', () => {
    const file = join(dir, 'schema.json');
    const doc = shipped();
    doc.optionSources.push({ ...groupItemsSource, label: '{nme}' });
    writeFileSync(file, JSON.stringify(doc, null, 2));
    expect(loadError(file)).toContain('optionSources[3].label');
  });
});

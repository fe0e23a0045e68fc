import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { projectRoot } from '../../src/paths.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';

// docs/examples/dataset.example.json, the example docs/datasets.md walks through: it imports,
// and the service then answers what the page says about it.

const examplePath = join(projectRoot, 'docs', 'examples', 'dataset.example.json');
const miaKey = 'sk_example_corner_mia_0123456789';
/** Given in the file only as its SHA-256; docs/datasets.md names the key. */
const leoKey = 'sk_example_corner_leo_menu_0123456';

let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ dataset: JSON.parse(readFileSync(examplePath, 'utf8')), clock: new ManualClock(Date.now()) });
});

afterAll(async () => {
  await t?.close();
});

describe('docs/examples/dataset.example.json', () => {
  test("imports: Mia's plain key is Corner Bakery's, with every scope", async () => {
    const me = await request(t.app).get('/v1/me').set('X-API-Key', miaKey).expect(200);
    expect(me.body).toEqual({
      key: { id: 'key_mia_all', name: 'Automation (all scopes)', scopes: ['device:read', 'menu:read', 'hooks:write'] },
      account: { id: 'acc_corner', name: 'Corner Bakery' },
    });
  });

  test("Leo's key, given as key_sha256, is the one the docs name, with menu:read only", async () => {
    const me = await request(t.app).get('/v1/me').set('X-API-Key', leoKey).expect(200);
    expect(me.body.key).toEqual({ id: 'key_leo_menu', name: 'Menu board only', scopes: ['menu:read'] });
    await request(t.app)
      .get('/devices')
      .set('Authorization', `Bearer ${leoKey}`)
      .expect(403, { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs device:read' }] });
  });

  test('two devices, one online and one offline for three days; one menu with nested groups and items', async () => {
    const devices = await request(t.app).get('/devices').set('Authorization', `Bearer ${miaKey}`).expect(200);
    expect(devices.body.total).toBe(2);
    expect(devices.body.data.map((d: { name: string; is_online: boolean }) => [d.name, d.is_online])).toEqual([
      ['Window display', true],
      ['Order board', false],
    ]);
    const menus = await request(t.app).get('/v1/menus').set('X-API-Key', miaKey).expect(200);
    expect(menus.body.metadata.menus.total).toBe(1);
    const groups = await request(t.app).get('/v1/groups').set('X-API-Key', miaKey).expect(200);
    const drinks = groups.body.groups[0];
    expect(drinks.name).toBe('Drinks');
    expect(drinks.groups[0].items[0].items).toHaveLength(2);
  });
});

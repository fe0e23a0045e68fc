import { afterAll, beforeAll, describe, expect, jest, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { expectSameOptions } from '../helpers/options.js';
import { hashKey } from '../../src/auth/keys.js';
import { resources } from '../../src/options/resources.js';
import { encodeCursor, type OptionQuery } from '../../src/options/render.js';
import { renderOptions } from '../../src/options/pager.js';
import { servedFromDatabase } from '../../src/options/database-options.js';
import type { OptionSource } from '../../src/manifest/schema.js';
import type { Principal } from '../../src/sources/types.js';

/**
 * docs/options.md, "Big accounts": device dropdowns answered by the database give the same
 * bytes, ETag, X-Total-Count and Link as the in-memory list for the same data: tricky names
 * (case, accents, numbers, duplicates, ties on the label and on the value), search, counts and
 * cursors, over HTTP, on the suite's engine.
 */

const KEY = 'sk_test_dropdown_db_0000000000000';
const OTHER_KEY = 'sk_test_dropdown_db_uncovered_000';
const DEVICES = '/v1/devices/options';

const stems = [
  'Café',
  'cafe',
  'CAFÉ',
  'Board',
  'board',
  'Ångström',
  'zeta',
  'Zeta',
  'Œuvre',
  'Straße',
  'Smith’s',
  'a-b',
  'a b',
  'ab',
  'a_b',
  'Ñandú',
  'Écran',
  'x',
];
const suffixes = ['', ' 2', ' 10', ' 02', ' 1.5', ' 1.05', '10', ' #3', ' (old)', ' ', '9', ' 007'];

function deviceDoc(i: number, name: string, id: string, user: string) {
  // Every fifth device shares its registration instant with the one before: ties all the way down.
  const registered = new Date(Date.UTC(2025, 0, 1) + Math.floor(i / 5) * 60_000).toISOString();
  return {
    id,
    name,
    timezone: 'Europe/Paris',
    screen_resolution: '1920x1080',
    screen_orientation: 'normal',
    registered_at: registered,
    last_heartbeat_at: 'now-30s',
    offline_startup: false,
    offline_startup_delay_minutes: 0,
    open_dev_tools: false,
    display_connected: true,
    connection_type: 'wifi',
    updated_at: registered,
    created_at: registered,
    access: [{ user_id: user, level: 'read' }],
  };
}

function dataset() {
  const devices = Array.from({ length: 320 }, (_, i) => {
    const name = `${stems[(i * 7) % stems.length]}${suffixes[(i * 5) % suffixes.length]}`;
    // Ids that the collator calls equal (dev-1, dev-01, DEV-001) and mixed case in the file.
    const id = i < 12 ? `${i % 2 ? 'DEV' : 'dev'}-${'0'.repeat(i % 3)}${Math.floor(i / 3)}` : `d4:${i.toString(16).padStart(4, '0')}`;
    return deviceDoc(i, name, id, 'usr_db');
  });
  devices.push(deviceDoc(400, 'Ωmega ☃', 'uncovered-1', 'usr_other'), deviceDoc(401, 'alpha', 'uncovered-2', 'usr_other'));
  return {
    accounts: [{ id: 'acc_db', name: 'Dropdowns' }],
    users: [
      { id: 'usr_db', account_id: 'acc_db', name: 'U' },
      { id: 'usr_other', account_id: 'acc_db', name: 'O' },
    ],
    api_keys: [
      { id: 'key_db', user_id: 'usr_db', name: 'K', scopes: ['device:read'], key: KEY },
      { id: 'key_other', user_id: 'usr_other', name: 'K2', scopes: ['device:read'], key: OTHER_KEY },
    ],
    devices,
    menus: [],
  };
}

function principal(key: string, userId: string): Principal {
  return { keyHash: hashKey(key), key, scopes: new Set(['device:read']), keyId: null, keyName: null, userId, accountId: 'acc_db', accountName: null };
}

let t: TestApp;
let source: OptionSource;
beforeAll(async () => {
  t = await buildTestApp({ dataset: dataset(), env: { DEVICE_CACHE_TTL_MS: '0' } });
  source = t.services.manifest.optionSources.find((s) => s.resource === 'devices')!;
});
afterAll(async () => t.close());

/** The in-memory answer: the whole list built and rendered as before the database path existed. */
async function expected(key: string, userId: string, query: OptionQuery) {
  const { list } = await t.services.options.list(source, principal(key, userId), {});
  return await renderOptions(list, query);
}

function pathOf(query: OptionQuery): string {
  const params = new URLSearchParams();
  if (query.format !== 'tuples') params.set('format', query.format);
  if (query.q !== undefined) params.set('q', query.q);
  if (query.limit !== undefined) params.set('limit', String(query.limit));
  if (query.offset > 0) params.set('cursor', encodeCursor(query.offset));
  const text = params.toString();
  return text ? `${DEVICES}?${text}` : DEVICES;
}

async function same(query: OptionQuery, key = KEY, userId = 'usr_db'): Promise<string | null> {
  const res = await request(t.app).get(pathOf(query)).set('X-API-Key', key).expect(200);
  const want = await expected(key, userId, query);
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
  { q: 'e', limit: 9 },
  { q: 'zzz' },
  { q: 'STRASSE' },
  { q: 'straße' },
  { q: ' ' },
  { q: '\u0301' },
  { q: '%' },
  { q: '_' },
  { q: 'smith’s' },
  { format: 'objects', limit: 11 },
  { format: 'n8n', limit: 13, q: 'a' },
  { format: 'n8n' },
  { limit: 50, offset: 300 },
  { limit: 5, offset: 999 },
];

describe('database path', () => {
  test('the shipped device source is served from the database', () => {
    expect(servedFromDatabase(source)).toBe(true);
  });

  test.each(queries.map((q) => [JSON.stringify(q), q] as const))('%s: same answer as the in-memory list', async (_name, partial) => {
    const load = jest.spyOn(resources.devices!, 'load');
    const query: OptionQuery = { format: 'tuples', offset: 0, ...partial };
    const res = await request(t.app).get(pathOf(query)).set('X-API-Key', KEY).expect(200);
    expect(load).not.toHaveBeenCalled();
    load.mockRestore();
    const want = await expected(KEY, 'usr_db', query);
    expect(res.text).toBe(want.body.toString());
    expect(res.headers['x-total-count']).toBe(String(want.total));
    expect(res.headers.etag).toBe(want.etag);
  });

  test.each([[undefined], ['cafe'], ['1']])('cursors (q=%s) walk the same pages, then the same pages out of order', async (q) => {
    const seen: string[] = [];
    let offset = 0;
    for (;;) {
      const next = await same({ format: 'tuples', q, limit: 17, offset });
      seen.push(String(offset));
      if (next === null) break;
      offset += 17;
    }
    expect(seen.length).toBeGreaterThan(1);
    // Cursors this replica did not hand out (no remembered row): the index is skipped instead.
    for (const o of [34, 5, 301]) await same({ format: 'objects', q, limit: 17, offset: o });
  });

  test('the count with q is the number of matches; If-None-Match gets 304', async () => {
    const res = await request(t.app).get(`${DEVICES}?q=caf&limit=3`).set('X-API-Key', KEY).expect(200);
    const cafes = dataset().devices.filter((d) => d.name.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().includes('caf')).length;
    expect(res.headers['x-total-count']).toBe(String(cafes));
    await request(t.app).get(`${DEVICES}?q=caf&limit=3`).set('X-API-Key', KEY).set('If-None-Match', res.headers.etag!).expect(304);
  });

  test('a user with a name the sort key does not cover gets the in-memory list', async () => {
    const load = jest.spyOn(resources.devices!, 'load');
    await same({ format: 'tuples', offset: 0 }, OTHER_KEY, 'usr_other');
    expect(load).toHaveBeenCalled();
    load.mockRestore();
  });
});

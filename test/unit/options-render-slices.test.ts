import { describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { buildOptionList, fold, type OptionList } from '../../src/options/option-list.js';
import { encodeCursor, type OptionFormat, type OptionQuery } from '../../src/options/render.js';
import { renderOptions } from '../../src/options/pager.js';
import type { OptionRecord } from '../../src/options/resources.js';
import { optionSourceSchema } from '../../src/manifest/schema.js';
import { turnsDuring } from '../helpers/event-loop.js';

/**
 * Big pages are rendered a slice at a time (docs/options.md, "Memory and the event loop"): the
 * body and its ETag must be, byte for byte, what rendering the whole page at once gives.
 */

/** The renderer before slicing, whole: select, one JSON.stringify, one hash. The reference. */
function reference(list: OptionList, query: OptionQuery): { body: string; etag: string; total: number; nextCursor: string | null } {
  let entries = list.entries;
  if (query.format === 'tree') {
    const wanted = query.parent?.toLowerCase() ?? null;
    const parent = wanted === null ? null : entries.find((e) => e.value.toLowerCase() === wanted)?.value;
    entries = entries.filter((e) => e.parent === parent);
  }
  if (query.q) {
    const needle = fold(query.q);
    entries = entries.filter((e) => (query.format === 'tree' ? fold(e.treeLabel) : e.folded).includes(needle));
  }
  const end = query.limit === undefined ? entries.length : Math.min(entries.length, query.offset + query.limit);
  const nextCursor = end < entries.length ? encodeCursor(end) : null;
  const page = entries.slice(query.offset, end);
  let body: unknown;
  if (query.format === 'objects') body = page.map((e) => ({ label: e.label, value: e.value }));
  else if (query.format === 'n8n') {
    const results = page.map((e) => ({ name: e.label, value: e.value }));
    body = nextCursor ? { results, paginationToken: nextCursor } : { results };
  } else if (query.format === 'tree') body = page.map((e) => [e.treeLabel, e.value, null, e.hasChildren]);
  else body = page.map((e) => [e.label, e.value]);
  const bytes = Buffer.from(JSON.stringify(body));
  return {
    body: bytes.toString('latin1'),
    etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 32)}"`,
    total: entries.length,
    nextCursor,
  };
}

/** Labels JSON and UTF-8 must get right: quotes, escapes, line separators, surrogate pairs and lone halves, scripts, nothing. */
const tricky = [
  'Café "au lait"',
  'back\\slash',
  'tab\tnew\nline\r',
  '\u2028\u2029',
  'burger 🍔 and ☕',
  'lone \ud800 high',
  'lone \udc00 low',
  '\ud83d',
  '菜单 › 饮料',
  'قائمة الطعام',
  '\u0000\u001f\u007f',
  '</script><!--',
  '',
  'Ångström ÉCRAN ß',
  'x'.repeat(1000),
];

/** `n` records: a tricky label each, in a tree three levels deep (every tenth a top group). */
function records(n: number): OptionRecord[] {
  return Array.from({ length: n }, (_, i) => ({
    id: i % 7 === 0 ? `G-${i}-É` : `g-${i}`,
    name: `${tricky[i % tricky.length]} ${i}`,
    path: `Top › ${tricky[(i * 3) % tricky.length]} › ${i}`,
    parent: i % 10 === 0 ? null : `g-${i - (i % 10)}`,
    hasChildren: i % 10 === 0,
  }));
}

const source = optionSourceSchema.parse({
  id: 'menu_groups',
  title: 'Group',
  path: '/v1/menus/{menuId}/groups/options',
  resource: 'groups',
  scope: 'menu:read',
  params: [{ name: 'menuId', title: 'Menu' }],
  label: '{path}',
  value: 'id',
  order: 'source',
  tree: { label: '{name}' },
});

const formats: OptionFormat[] = ['tuples', 'objects', 'n8n', 'tree'];

async function expectSame(list: OptionList, query: OptionQuery): Promise<void> {
  const want = reference(list, query);
  const got = await renderOptions(list, query);
  // Compared as text (latin1 keeps every byte), without a megabyte diff on failure.
  expect(got.body.toString('latin1') === want.body).toBe(true);
  expect({ etag: got.etag, total: got.total, nextCursor: got.nextCursor }).toEqual({ etag: want.etag, total: want.total, nextCursor: want.nextCursor });
}

describe('rendering in slices gives the bytes and ETag of rendering at once', () => {
  test.each([0, 1, 1999, 2000, 2001, 4000, 4001, 10_007])('%d entries, every format, with and without q, limit, offset', async (n) => {
    const list = await buildOptionList(source, records(n));
    for (const format of formats) {
      const queries: OptionQuery[] = [
        { format, offset: 0 },
        { format, offset: 1 },
        { format, offset: 0, q: 'CAFE' },
        { format, offset: 0, q: '🍔' },
        { format, offset: 0, q: '›' },
        { format, offset: 500, limit: 3000 },
        { format, offset: 2000, limit: 2500 },
        { format, offset: n + 5, limit: 10 },
      ];
      if (format === 'tree' && n > 70) queries.push({ format, offset: 0, parent: 'g-10' }, { format, offset: 0, parent: 'G-70-É' });
      for (const query of queries) await expectSame(list, query);
    }
  });

  test('100,000 entries, every format', async () => {
    const list = await buildOptionList(source, records(100_000));
    for (const format of formats) await expectSame(list, { format, offset: 0 });
    await expectSame(list, { format: 'n8n', offset: 10, limit: 50_000 });
  });
});

describe('when rendering yields', () => {
  test('a page of up to 2,000 entries is rendered at once: the warm dropdown pays nothing for slicing', async () => {
    const list = await buildOptionList(source, records(2000));
    expect((await turnsDuring(() => renderOptions(list, { format: 'tuples', offset: 0 }))).turns).toBe(0);
    expect((await turnsDuring(() => renderOptions(list, { format: 'tuples', offset: 0, q: 'cafe' }))).turns).toBe(0);
  });

  test('a bigger page or search yields about every 2,000 entries', async () => {
    const list = await buildOptionList(source, records(20_000));
    // 10 slices to render: 9 yields.
    expect((await turnsDuring(() => renderOptions(list, { format: 'objects', offset: 0 }))).turns).toBeGreaterThanOrEqual(9);
    // The search goes over 10 slices (9 yields); its 11 matches are rendered at once.
    expect((await turnsDuring(() => renderOptions(list, { format: 'tuples', offset: 0, q: '› 1999' }))).turns).toBeGreaterThanOrEqual(9);
  });
});

import { describe, expect, test } from '@jest/globals';
import { compileTemplate, templateFields } from '../../src/manifest/template.js';
import { buildOptionList, fold } from '../../src/options/option-list.js';
import { decodeCursor, encodeCursor, matchesIfNoneMatch, type OptionQuery } from '../../src/options/render.js';
import { renderOptions } from '../../src/options/pager.js';
import type { OptionRecord } from '../../src/options/resources.js';
import { optionSourceSchema, type OptionSource } from '../../src/manifest/schema.js';
import { AppError } from '../../src/errors.js';

/** Pure parts of docs/options.md: templates, folding, list building, rendering, cursors, ETags. */

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

/** An option source as the manifest would declare it, validated by the real schema. */
function source(overrides: Record<string, unknown> = {}): OptionSource {
  return optionSourceSchema.parse({
    id: 'menus',
    title: 'Menu',
    path: '/v1/menus/options',
    resource: 'menus',
    scope: 'menu:read',
    label: '{name}',
    value: 'id',
    order: 'label',
    ...overrides,
  });
}

const groupsSource = () =>
  source({
    id: 'menu_groups',
    path: '/v1/menus/{menuId}/groups/options',
    resource: 'groups',
    params: [{ name: 'menuId', title: 'Menu' }],
    label: '{path}',
    order: 'source',
    tree: { label: '{name}' },
  });

const records = (...names: Array<[string, string]>): OptionRecord[] => names.map(([id, name]) => ({ id, name }));

const q = (query: Partial<OptionQuery> = {}): OptionQuery => ({ format: 'tuples', offset: 0, ...query });

const parse = (rendered: { body: Buffer }): Json => JSON.parse(rendered.body.toString('utf8'));

describe('templateFields', () => {
  test.each<[string, string[]]>([
    ['{name}', ['name']],
    ['{name} — ${price}', ['name', 'price']],
    ['{price|n/a}', ['price']],
    ['{name|}', ['name']],
    ['{a}{b}{a}', ['a', 'b', 'a']],
    ['plain text', []],
    ['{ name }', []],
    ['{}', []],
    ['{1st}', []],
    ['{in_stock}', ['in_stock']],
  ])('%s → %j', (template, fields) => {
    expect(templateFields(template)).toEqual(fields);
  });

  test('gives the same answer when called again (no regex state leaks between calls)', async () => {
    expect(templateFields('{a} {b}')).toEqual(['a', 'b']);
    expect(templateFields('{a} {b}')).toEqual(['a', 'b']);
  });
});

describe('compileTemplate', () => {
  test('inserts fields; everything else is literal', async () => {
    const render = compileTemplate('{name} — ${price}');
    expect(render({ name: 'Latte', price: 4.25 })).toBe('Latte — $4.25');
    expect(render({ name: 'Burger', price: 11 })).toBe('Burger — $11');
  });

  test('a compiled template is reusable across records', async () => {
    const render = compileTemplate('[{id}] {name}');
    expect(render({ id: 'a', name: 'A' })).toBe('[a] A');
    expect(render({ id: 'b', name: 'B' })).toBe('[b] B');
  });

  test('null and missing fields render empty without a fallback', async () => {
    const render = compileTemplate('{name} — ${price}');
    expect(render({ name: 'Double shot', price: null })).toBe('Double shot — $');
    expect(render({ name: 'Double shot' })).toBe('Double shot — $');
  });

  test('{field|fallback} uses the fallback only for null or missing', async () => {
    const render = compileTemplate('{name} ({price|no price})');
    expect(render({ name: 'A', price: null })).toBe('A (no price)');
    expect(render({ name: 'A' })).toBe('A (no price)');
    expect(render({ name: 'A', price: 0 })).toBe('A (0)');
    expect(render({ name: 'A', price: '' })).toBe('A ()');
    expect(render({ name: 'A', price: false })).toBe('A (false)');
    expect(render({ name: 'A', price: 3 })).toBe('A (3)');
  });

  test('an empty fallback is allowed', async () => {
    expect(compileTemplate('{a|}x')({ a: null })).toBe('x');
  });

  test('text that is not a placeholder stays as it is', async () => {
    const render = compileTemplate('{ name } {} {1x} $& $1 {name}');
    expect(render({ name: 'N' })).toBe('{ name } {} {1x} $& $1 N');
  });

  test('a template without placeholders is constant', async () => {
    expect(compileTemplate('Fixed')({ name: 'x' })).toBe('Fixed');
    expect(compileTemplate('')({})).toBe('');
  });

  test('field values containing braces are not re-expanded', async () => {
    expect(compileTemplate('{name}')({ name: '{id}', id: 'x' })).toBe('{id}');
  });

  test('booleans and numbers are printed with String()', async () => {
    expect(compileTemplate('{inStock}/{calories}')({ inStock: true, calories: 190 })).toBe('true/190');
  });
});

describe('fold', () => {
  test.each<[string, string]>([
    ['Café', 'cafe'],
    ['CAFÉ', 'cafe'],
    ['Cafe\u0301', 'cafe'],
    ['Éclair', 'eclair'],
    ['Ångström', 'angstrom'],
    ['Crème Brûlée', 'creme brulee'],
    ['Menu Board 10', 'menu board 10'],
    ['Drinks › Hot drinks', 'drinks › hot drinks'],
    ['', ''],
  ])('%s → %s', (text, folded) => {
    expect(fold(text)).toBe(folded);
  });

  test('a folded query is a substring of the folded label regardless of case and accents', async () => {
    expect(fold('Café window').includes(fold('CAFE'))).toBe(true);
    expect(fold('Front counter').includes(fold('frönt'))).toBe(true);
  });
});

describe('buildOptionList', () => {
  test('label order: numeric-aware ("Menu board 2" before "Menu board 10")', async () => {
    const list = await buildOptionList(source(), records(['a', 'Menu board 10'], ['b', 'Menu board 2'], ['c', 'Menu board 1']));
    expect(list.entries.map((e) => e.label)).toEqual(['Menu board 1', 'Menu board 2', 'Menu board 10']);
  });

  test('label order: case- and accent-insensitive', async () => {
    const list = await buildOptionList(source(), records(['1', 'banana'], ['2', 'Apple'], ['3', 'cherry'], ['4', 'Éclair'], ['5', 'date']));
    expect(list.entries.map((e) => e.label)).toEqual(['Apple', 'banana', 'cherry', 'date', 'Éclair']);
  });

  test('label order: equal labels (ignoring case) are ordered by value', async () => {
    const list = await buildOptionList(source(), records(['m-b', 'specials'], ['m-a', 'Specials'], ['m-c', 'SPECIALS']));
    expect(list.entries.map((e) => e.value)).toEqual(['m-a', 'm-b', 'm-c']);
    // …also numeric-aware on the value.
    const byNumber = await buildOptionList(source(), records(['10', 'Same'], ['9', 'Same'], ['100', 'Same']));
    expect(byNumber.entries.map((e) => e.value)).toEqual(['9', '10', '100']);
  });

  test('label order does not depend on the input order', async () => {
    const input = records(['a', 'Screen 10'], ['b', 'screen 2'], ['c', 'Screen 1'], ['d', 'Donut'], ['e', 'éclair']);
    const forward = (await buildOptionList(source(), input)).entries.map((e) => e.value);
    const backward = (await buildOptionList(source(), [...input].reverse())).entries.map((e) => e.value);
    expect(forward).toEqual(['d', 'e', 'c', 'b', 'a']);
    expect(backward).toEqual(forward);
  });

  test('source order keeps the input order', async () => {
    const list = await buildOptionList(source({ order: 'source' }), records(['z', 'Zeta'], ['a', 'Alpha'], ['m', 'Mu']));
    expect(list.entries.map((e) => e.value)).toEqual(['z', 'a', 'm']);
  });

  test('label and value come from the template and the value field', async () => {
    const list = await buildOptionList(source({ label: '{name} ({description|none})', value: 'id' }), [
      { id: 'x', name: 'X', description: 'desc' },
      { id: 'y', name: 'Y', description: null },
    ]);
    expect(list.entries.map((e) => [e.label, e.value])).toEqual([
      ['X (desc)', 'x'],
      ['Y (none)', 'y'],
    ]);
  });

  test('values are strings even when the field is not', async () => {
    const devices = source({ id: 'devices', path: '/v1/devices/options', resource: 'devices', scope: 'device:read', value: 'is_online' });
    const list = await buildOptionList(devices, [{ id: 'a', name: 'A', is_online: true }]);
    expect(list.entries[0]!.value).toBe('true');
  });

  test('filters keep only records whose fields equal the given values (AND)', async () => {
    const devices = source({
      id: 'devices',
      path: '/v1/devices/options',
      resource: 'devices',
      scope: 'device:read',
      filter: { status: 'online', connection_type: 'wifi' },
    });
    const list = await buildOptionList(devices, [
      { id: 'a', name: 'A', status: 'online', connection_type: 'wifi' },
      { id: 'b', name: 'B', status: 'offline', connection_type: 'wifi' },
      { id: 'c', name: 'C', status: 'online', connection_type: 'ethernet' },
      { id: 'd', name: 'D', status: 'online', connection_type: 'wifi' },
    ]);
    expect(list.entries.map((e) => e.value)).toEqual(['a', 'd']);
  });

  test('filters compare by type: true is not "true", null matches null only', async () => {
    const items = (filter: Record<string, unknown>) =>
      source({ id: 'items', path: '/v1/groups/{groupId}/items/options', resource: 'items', params: [{ name: 'groupId', title: 'G' }], filter });
    const input: OptionRecord[] = [
      { id: 'a', name: 'A', inStock: true, price: null },
      { id: 'b', name: 'B', inStock: false, price: 2 },
      { id: 'c', name: 'C', inStock: 'true', price: 0 },
    ];
    expect((await buildOptionList(items({ inStock: true }), input)).entries.map((e) => e.value)).toEqual(['a']);
    expect((await buildOptionList(items({ price: null }), input)).entries.map((e) => e.value)).toEqual(['a']);
    expect((await buildOptionList(items({ price: 0 }), input)).entries.map((e) => e.value)).toEqual(['c']);
  });

  test('entries carry the folded label and, for trees, their own label, parent and children flag', async () => {
    const list = await buildOptionList(groupsSource(), [
      { id: 'g1', name: 'Drinks', path: 'Drinks', parent: null, hasChildren: true },
      { id: 'g2', name: 'Hot drinks', path: 'Drinks › Hot drinks', parent: 'g1', hasChildren: false },
    ]);
    expect(list.entries).toEqual([
      { label: 'Drinks', value: 'g1', folded: 'drinks', treeLabel: 'Drinks', parent: null, hasChildren: true },
      { label: 'Drinks › Hot drinks', value: 'g2', folded: 'drinks › hot drinks', treeLabel: 'Hot drinks', parent: 'g1', hasChildren: false },
    ]);
  });

  test('records without tree fields are top-level leaves', async () => {
    const list = await buildOptionList(source(), records(['a', 'Café']));
    expect(list.entries[0]).toMatchObject({ folded: 'cafe', treeLabel: 'Café', parent: null, hasChildren: false });
  });

  test('an empty input gives an empty list', async () => {
    expect((await buildOptionList(source(), [])).entries).toEqual([]);
  });
});

describe('renderOptions', () => {
  const menus = () => buildOptionList(source(), records(['d', 'Delta'], ['a', 'Alpha'], ['c', 'Charlie'], ['b', 'Bravo'], ['e', 'Echo']));
  const ALL = [
    ['Alpha', 'a'],
    ['Bravo', 'b'],
    ['Charlie', 'c'],
    ['Delta', 'd'],
    ['Echo', 'e'],
  ];
  const tree = () =>
    buildOptionList(groupsSource(), [
      { id: 'g1', name: 'Drinks', path: 'Drinks', parent: null, hasChildren: true },
      { id: 'g2', name: 'Hot drinks', path: 'Drinks › Hot drinks', parent: 'g1', hasChildren: true },
      { id: 'g3', name: 'Espresso', path: 'Drinks › Hot drinks › Espresso', parent: 'g2', hasChildren: false },
      { id: 'g4', name: 'Cold drinks', path: 'Drinks › Cold drinks', parent: 'g1', hasChildren: false },
      { id: 'g5', name: 'Burgers', path: 'Burgers', parent: null, hasChildren: false },
    ]);

  test('tuples (default)', async () => {
    const rendered = await renderOptions(await menus(), q());
    expect(parse(rendered)).toEqual(ALL);
    expect(rendered.total).toBe(5);
    expect(rendered.nextCursor).toBeNull();
  });

  test('objects', async () => {
    expect(parse(await renderOptions(await menus(), q({ format: 'objects' })))).toEqual(ALL.map(([label, value]) => ({ label, value })));
  });

  test('n8n without and with a next page', async () => {
    expect(parse(await renderOptions(await menus(), q({ format: 'n8n' })))).toEqual({ results: ALL.map(([name, value]) => ({ name, value })) });
    const first = await renderOptions(await menus(), q({ format: 'n8n', limit: 2 }));
    expect(parse(first)).toEqual({
      results: ALL.slice(0, 2).map(([name, value]) => ({ name, value })),
      paginationToken: first.nextCursor,
    });
    const last = await renderOptions(await menus(), q({ format: 'n8n', limit: 2, offset: 4 }));
    expect(parse(last)).toEqual({ results: [{ name: 'Echo', value: 'e' }] });
  });

  test('tree: one level at a time, own names, hasChildren', async () => {
    const list = await tree();
    expect(parse(await renderOptions(list, q({ format: 'tree' })))).toEqual([
      ['Drinks', 'g1', null, true],
      ['Burgers', 'g5', null, false],
    ]);
    expect(parse(await renderOptions(list, q({ format: 'tree', parent: 'g1' })))).toEqual([
      ['Hot drinks', 'g2', null, true],
      ['Cold drinks', 'g4', null, false],
    ]);
    expect(parse(await renderOptions(list, q({ format: 'tree', parent: 'g3' })))).toEqual([]);
    // The flat formats show every group with its path, in source order.
    expect(parse(await renderOptions(list, q())).map((o: string[]) => o[0])).toEqual([
      'Drinks',
      'Drinks › Hot drinks',
      'Drinks › Hot drinks › Espresso',
      'Drinks › Cold drinks',
      'Burgers',
    ]);
  });

  test('tree: an unknown parent is a validation error naming parent', async () => {
    let caught: unknown;
    try {
      await renderOptions(await tree(), q({ format: 'tree', parent: 'nope' }));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(AppError);
    expect((caught as AppError).status).toBe(400);
    expect((caught as AppError).details).toEqual([expect.objectContaining({ path: 'parent' })]);
  });

  test('q filters the label case- and accent-insensitively; tree q filters the node name', async () => {
    const list = await buildOptionList(source(), records(['1', 'Café window'], ['2', 'Front counter'], ['3', 'CAFE bar']));
    expect(parse(await renderOptions(list, q({ q: 'cafe' })))).toEqual([
      ['CAFE bar', '3'],
      ['Café window', '1'],
    ]);
    expect(parse(await renderOptions(list, q({ q: 'CAFÉ W' })))).toEqual([['Café window', '1']]);
    expect((await renderOptions(list, q({ q: 'zzz' }))).total).toBe(0);
    // Path labels match on any segment…
    expect(parse(await renderOptions(await tree(), q({ q: 'hot' }))).map((o: string[]) => o[1])).toEqual(['g2', 'g3']);
    // …but in a tree only the node's own name counts ("Drinks" is not in "Espresso").
    expect(parse(await renderOptions(await tree(), q({ format: 'tree', parent: 'g2', q: 'drinks' })))).toEqual([]);
    expect(parse(await renderOptions(await tree(), q({ format: 'tree', parent: 'g1', q: 'COLD' })))).toEqual([['Cold drinks', 'g4', null, false]]);
  });

  test('paging: pages of `limit` joined by the cursors give the whole list; total is the match count', async () => {
    const list = await menus();
    const seen: Json[] = [];
    let offset = 0;
    let pages = 0;
    for (;;) {
      const page = await renderOptions(list, q({ limit: 2, offset }));
      expect(page.total).toBe(5);
      seen.push(...parse(page));
      pages += 1;
      if (page.nextCursor === null) break;
      const next = decodeCursor(page.nextCursor);
      expect(next).toBe(offset + 2);
      offset = next!;
    }
    expect(pages).toBe(3);
    expect(seen).toEqual(ALL);
  });

  test('paging with q counts only the matches', async () => {
    const page = await renderOptions(await menus(), q({ q: 'a', limit: 1 }));
    // Alpha, Bravo, Charlie, Delta contain "a"; Echo does not.
    expect(page.total).toBe(4);
    expect(parse(page)).toEqual([['Alpha', 'a']]);
    expect(page.nextCursor).not.toBeNull();
  });

  test('a limit that covers the rest has no next cursor; an offset past the end is an empty last page', async () => {
    expect((await renderOptions(await menus(), q({ limit: 5 }))).nextCursor).toBeNull();
    expect((await renderOptions(await menus(), q({ limit: 3, offset: 2 }))).nextCursor).toBeNull();
    const past = await renderOptions(await menus(), q({ limit: 3, offset: 50 }));
    expect(parse(past)).toEqual([]);
    expect(past.total).toBe(5);
    expect(past.nextCursor).toBeNull();
  });

  test('an offset without a limit returns the rest', async () => {
    expect(parse(await renderOptions(await menus(), q({ offset: 3 })))).toEqual(ALL.slice(3));
  });

  test('ETag: strong, quoted, over the body; stable for the same data and query', async () => {
    const a = await renderOptions(await menus(), q());
    const b = await renderOptions(await menus(), q());
    expect(a.etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
    expect(a.etag.startsWith('W/')).toBe(false);
    // Two lists built separately from the same records: same tag (survives a cache refresh).
    expect(b.etag).toBe(a.etag);
    // Input order does not matter for a label-ordered source.
    const reversed = await buildOptionList(source(), records(['e', 'Echo'], ['b', 'Bravo'], ['c', 'Charlie'], ['a', 'Alpha'], ['d', 'Delta']));
    expect((await renderOptions(reversed, q())).etag).toBe(a.etag);
  });

  test('ETag differs when the data or the query differs', async () => {
    const list = await menus();
    const tags = [
      (await renderOptions(list, q())).etag,
      (await renderOptions(list, q({ format: 'objects' }))).etag,
      (await renderOptions(list, q({ format: 'n8n' }))).etag,
      (await renderOptions(list, q({ q: 'a' }))).etag,
      (await renderOptions(list, q({ limit: 2 }))).etag,
      (await renderOptions(list, q({ limit: 2, offset: 2 }))).etag,
    ];
    expect(new Set(tags).size).toBe(tags.length);
    const renamed = await buildOptionList(source(), records(['d', 'Delta'], ['a', 'Alpha'], ['c', 'Charlie'], ['b', 'Bravo'], ['e', 'Echo 2']));
    expect((await renderOptions(renamed, q())).etag).not.toBe(tags[0]);
  });

  test('bodies are UTF-8 JSON (labels with accents and ›)', async () => {
    const list = await buildOptionList(source(), records(['1', 'Café › Crème']));
    const rendered = await renderOptions(list, q());
    expect(rendered.body.toString('utf8')).toBe('[["Café › Crème","1"]]');
  });
});

describe('cursors', () => {
  test.each([0, 1, 2, 1000, 999_999_999])('round trip %d', (offset) => {
    const cursor = encodeCursor(offset);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toBe(offset);
  });

  const b64 = (text: string) => Buffer.from(text).toString('base64url');

  test.each([
    ['empty', ''],
    ['garbage', 'garbage'],
    ['punctuation', '!!!'],
    ['the plain text', 'o:1'],
    ['a negative offset', b64('o:-1')],
    ['a fraction', b64('o:1.5')],
    ['a space', b64('o: 1')],
    ['another prefix', b64('x:1')],
    ['trailing text', b64('o:1x')],
    ['a trailing newline', b64('o:1\n')],
    ['a leading newline', b64('\no:1')],
    ['ten digits', b64('o:1234567890')],
    ['no digits', b64('o:')],
    ['JSON', b64('{"offset":1}')],
  ])('decodeCursor rejects %s', (_name, cursor) => {
    expect(decodeCursor(cursor)).toBeNull();
  });
});

describe('matchesIfNoneMatch', () => {
  const etag = '"abc123"';

  test.each<[string | undefined, boolean]>([
    [undefined, false],
    ['', false],
    ['"abc123"', true],
    ['  "abc123"  ', true],
    ['"other"', false],
    ['"other", "abc123"', true],
    ['"abc123","other"', true],
    ['"x", "y", "z"', false],
    ['*', true],
    [' * ', true],
    ['W/"abc123"', true],
    ['"x", W/"abc123"', true],
    ['W/"other"', false],
    ['abc123', false],
    ['"abc12"', false],
    ['"abc1234"', false],
    ['"ABC123"', false],
  ])('%j → %s', (header, expected) => {
    expect(matchesIfNoneMatch(header, etag)).toBe(expected);
  });
});

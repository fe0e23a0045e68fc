'use strict';

const { afterAll, describe, expect, test } = require('@jest/globals');
const { appTester, bundle, connectorGet, cursorRpc, definition, operation, pager } = require('./harness');

afterAll(() => cursorRpc.close());

/**
 * Input values for a dropdown that depends on others (the groups of a menu): the first
 * choice of each dropdown its input fields draw from.
 * @param {import('../lib/types').OptionTriggerSpec} spec
 */
const parentChoices = async (spec) => {
  /** @type {Record<string, string>} */
  const inputData = {};
  for (const field of spec.inputFields) {
    if (typeof field.dynamic !== 'string') continue;
    const parent = field.dynamic.split('.')[0] || '';
    const choices = await appTester(operation(parent).perform, bundle());
    if (!choices[0]) throw new Error(`${spec.key} needs at least one choice in ${parent} to list anything`);
    inputData[field.key] = choices[0].id;
  }
  return inputData;
};

/**
 * The option endpoint's path for the chosen parents (`{menuId}` filled from `menu_id`).
 * @param {import('../lib/types').OptionTriggerSpec} spec
 * @param {Record<string, string>} inputData
 */
const optionPath = (spec, inputData) =>
  spec.path.replace(/\{([A-Za-z0-9]+)\}/g, (_match, /** @type {string} */ name) => {
    const param = spec.params.find((p) => p.name === name);
    const key = param ? param.inputKeys.find((k) => inputData[k] !== undefined) : undefined;
    return encodeURIComponent(key ? String(inputData[key]) : '');
  });

/**
 * Every page of the connector's own option endpoint, each as {id, name} choices.
 * @param {string} path
 * @param {number} limit
 */
const connectorPages = async (path, limit) => {
  /** @type {Array<Array<{id: string, name: string}>>} */
  const pages = [];
  let url = `${path}?format=objects&limit=${limit}`;
  for (;;) {
    const { status, body, headers } = await connectorGet(url);
    expect(status).toBe(200);
    pages.push(body.map((/** @type {{label: string, value: unknown}} */ o) => ({ id: String(o.value), name: o.label })));
    const next = /<([^>]*)>\s*;\s*rel="next"/.exec(headers.get('link') || '');
    if (!next || !next[1]) return pages;
    const nextUrl = new URL(next[1]);
    url = `${nextUrl.pathname}${nextUrl.search}`;
  }
};

describe.each(definition.optionTriggers)('dropdown $key', (spec) => {
  test('lists {id, name} choices', async () => {
    const choices = await appTester(operation(spec.key).perform, bundle({ inputData: await parentChoices(spec) }));
    expect(Array.isArray(choices)).toBe(true);
    for (const choice of choices) expect(choice).toEqual({ id: expect.any(String), name: expect.any(String) });
  });

  test('pages like the connector: page 0, then each "load more" the next page through z.cursor, then nothing', async () => {
    const inputData = await parentChoices(spec);
    const expected = await connectorPages(optionPath(spec, inputData), spec.pageSize);
    const dropdown = pager(spec.key);
    for (let page = 0; page < expected.length; page++) {
      expect(await dropdown.page(page, inputData)).toEqual(expected[page]);
      // The next page's cursor was kept in Zapier's cursor store.
      expect(JSON.parse(String(dropdown.stored()))).toEqual({ page: page + 1, cursor: page + 1 < expected.length ? expect.any(String) : null });
    }
    expect(await dropdown.page(expected.length, inputData)).toEqual([]);

    // Together: the whole list, each choice once.
    const whole = await connectorGet(`${optionPath(spec, inputData)}?format=objects`);
    const all = expected.flat();
    expect(all).toEqual(whole.body.map((/** @type {{label: string, value: unknown}} */ o) => ({ id: String(o.value), name: o.label })));
    expect(new Set(all.map((choice) => choice.id)).size).toBe(all.length);
  });

  test('a "load more" page without a stored cursor is found by following the cursors from the first page', async () => {
    const inputData = await parentChoices(spec);
    const expected = await connectorPages(optionPath(spec, inputData), spec.pageSize);
    // The app tester has no cursor store.
    const second = await appTester(operation(spec.key).perform, bundle({ inputData, meta: { page: 1 } }));
    expect(second).toEqual(expected[1] || []);
  });

  if (spec.params.length > 0) {
    test('without the dropdown it depends on, it says which to choose first', async () => {
      const title = spec.params[0] ? spec.params[0].title : '';
      await expect(appTester(operation(spec.key).perform, bundle())).rejects.toThrow(`choose a ${title} first`);
    });
  }
});

describe('devices dropdown', () => {
  const spec = definition.optionTriggers.find((trigger) => trigger.key === 'devices_list');
  const deviceCount = Number(process.env.PLATFORM_TEST_DEVICE_COUNT || 0);
  const run = spec && deviceCount > spec.pageSize ? test : test.skip;
  if (spec && run === test.skip) console.warn(`Skipped: the devices dropdown past its first page needs PLATFORM_TEST_DEVICE_COUNT over ${spec.pageSize} (the test dataset).`);

  run('reaches every device past the first page (PLATFORM_TEST_DEVICE_COUNT devices)', async () => {
    if (!spec) return;
    const dropdown = pager(spec.key);
    /** @type {string[]} */
    const ids = [];
    for (let page = 0; ; page++) {
      const choices = await dropdown.page(page);
      if (choices.length === 0) break;
      expect(choices.length).toBeLessThanOrEqual(spec.pageSize);
      ids.push(...choices.map((/** @type {{id: string}} */ choice) => choice.id));
    }
    expect(ids).toHaveLength(deviceCount);
    expect(new Set(ids).size).toBe(deviceCount);
  });
});

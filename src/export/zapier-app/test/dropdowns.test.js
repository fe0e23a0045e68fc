'use strict';

const { describe, expect, test } = require('@jest/globals');
const { appTester, bundle, definition, operation } = require('./harness');

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

describe.each(definition.optionTriggers)('dropdown $key', (spec) => {
  test('lists {id, name} choices', async () => {
    const choices = await appTester(operation(spec.key).perform, bundle({ inputData: await parentChoices(spec) }));
    expect(Array.isArray(choices)).toBe(true);
    for (const choice of choices) expect(choice).toEqual({ id: expect.any(String), name: expect.any(String) });
  });

  test('a "load more" page adds nothing (the first page has every choice)', async () => {
    const more = bundle({ inputData: await parentChoices(spec), meta: { page: 1 } });
    expect(await appTester(operation(spec.key).perform, more)).toEqual([]);
  });

  if (spec.params.length > 0) {
    test('without the dropdown it depends on, it says which to choose first', async () => {
      const title = spec.params[0] ? spec.params[0].title : '';
      await expect(appTester(operation(spec.key).perform, bundle())).rejects.toThrow(`choose a ${title} first`);
    });
  }
});

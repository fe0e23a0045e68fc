import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { credentials, fillPath } from '../src/lib/connector';
import { fetchChoices, optionSource } from '../src/lib/options';
import { actions, connection, connectorGet, definition, dropdown, triggers } from './harness';

/** Every dropdown prop of the piece: where it is and which option source fills it. */
const uses = [
  ...definition.operations.flatMap((operation) =>
    operation.inputs.filter((input) => input.optionsFrom).map((input) => ({ owner: actions[operation.id]!.props, key: input.key, source: input.optionsFrom!, optionParams: input.optionParams, where: `action ${operation.id}` })),
  ),
  ...definition.triggers.flatMap((trigger) =>
    [trigger.id, `${trigger.id}_polling`].flatMap((name) =>
      trigger.inputs.filter((input) => input.optionsFrom).map((input) => ({ owner: triggers[name]!.props, key: input.key, source: input.optionsFrom!, optionParams: {} as Record<string, string>, where: `trigger ${name}` })),
    ),
  ),
];

/** Values for the props a source's path parameters come from: the first choice of each parent dropdown. */
async function parentValues(sourceId: string, optionParams: Record<string, string>): Promise<Record<string, unknown>> {
  const values: Record<string, unknown> = {};
  for (const param of optionSource(sourceId).params) {
    const parent = definition.optionSources.find((source) => source.id === param.optionsFrom)!;
    const choices = await fetchChoices(credentials(connection()), parent, {}, undefined);
    assert.ok(choices.options[0], `${parent.id} has a choice`);
    values[optionParams[param.name] ?? param.name] = choices.options[0]!.value;
  }
  return values;
}

test('every option source has a dropdown somewhere in the piece', () => {
  for (const source of definition.optionSources) assert.ok(uses.some((use) => use.source === source.id), source.id);
});

for (const use of uses) {
  describe(`${use.where}: ${use.key} (${use.source})`, () => {
    test('lists every choice, reading past the first page', async () => {
      const parents = await parentValues(use.source, use.optionParams);
      const state = await dropdown(use.owner, use.key).options(parents);
      assert.notEqual(state.disabled, true, state.placeholder);
      const params = Object.fromEntries(optionSource(use.source).params.map((param) => [param.name, parents[use.optionParams[param.name] ?? param.name]]));
      const direct = await connectorGet(`${fillPath(optionSource(use.source).path, params)}?limit=1`);
      const total = Number(direct.headers.get('x-total-count'));
      assert.equal(state.options.length, Math.min(total, 1000));
      assert.equal(new Set(state.options.map((option) => option.value)).size, state.options.length, 'no choice twice');
      if (use.source === 'devices' && process.env['PLATFORM_TEST_DEVICE_COUNT']) assert.equal(state.options.length, Number(process.env['PLATFORM_TEST_DEVICE_COUNT']));
    });

    test('searches on the server', async () => {
      const parents = await parentValues(use.source, use.optionParams);
      const all = (await dropdown(use.owner, use.key).options(parents)).options;
      const target = all[all.length - 1]!; // beyond the first page when the list is long
      const search = target.label.slice(-6);
      const found = await dropdown(use.owner, use.key).options(parents, search);
      assert.ok(found.options.some((option) => option.value === target.value), `${search} finds ${target.label}`);
      for (const option of found.options) assert.ok(option.label.toLowerCase().includes(search.toLowerCase()), option.label);
      const none = await dropdown(use.owner, use.key).options(parents, 'zz-no-such-choice-zz');
      assert.deepEqual(none.options, []);
    });
  });
}

test('page 2 through the cursor continues page 1', async () => {
  for (const source of definition.optionSources) {
    const parents = await parentValues(source.id, Object.fromEntries(source.params.map((param) => [param.name, param.name])));
    const creds = credentials(connection());
    const whole = await fetchChoices(creds, source, parents, undefined);
    const twoPages = await fetchChoices(creds, source, parents, undefined, 2, 2);
    assert.deepEqual(twoPages.options, whole.options.slice(0, 4), source.id);
    assert.equal(twoPages.truncated, whole.options.length > 4);
  }
});

test('the groups dropdown follows the chosen menu', async (t) => {
  const getGroup = definition.operations.find((operation) => operation.inputs.some((input) => Object.keys(input.optionParams).length > 0))!;
  const input = getGroup.inputs.find((candidate) => Object.keys(candidate.optionParams).length > 0)!;
  const groups = dropdown(actions[getGroup.id]!.props, input.key);
  assert.deepEqual(groups.refreshers, Object.values(input.optionParams));
  const [menuKey] = Object.values(input.optionParams);

  const none = await groups.options({});
  assert.equal(none.disabled, true);
  assert.match(none.placeholder ?? '', /Choose a .+ first/);

  const unknown = await groups.options({ [menuKey!]: '00000000-0000-4000-8000-000000000000' });
  assert.equal(unknown.disabled, true);
  assert.match(unknown.placeholder ?? '', /Menu not found/);

  const menus = (await dropdown(actions[getGroup.id]!.props, menuKey!).options()).options;
  if (menus.length < 2) {
    t.skip(`the key has ${menus.length} menu(s); following the menu needs two (the test dataset has them)`);
    return;
  }
  const lists = await Promise.all(menus.map(async (menu) => (await groups.options({ [menuKey!]: menu.value })).options.map((option) => option.value)));
  assert.ok(lists.some((list, i) => i > 0 && JSON.stringify(list) !== JSON.stringify(lists[0])), 'menus have different groups');
});

test('a menu with more than one page of groups lists them all', async (t) => {
  const getGroup = definition.operations.find((operation) => operation.inputs.some((input) => Object.keys(input.optionParams).length > 0))!;
  const input = getGroup.inputs.find((candidate) => Object.keys(candidate.optionParams).length > 0)!;
  const [menuKey] = Object.values(input.optionParams);
  const source = definition.optionSources.find((candidate) => candidate.id === input.optionsFrom)!;
  const menus = (await dropdown(actions[getGroup.id]!.props, menuKey!).options()).options;
  const creds = credentials(connection());
  for (const menu of menus) {
    const first = await fetchChoices(creds, source, { [source.params[0]!.name]: menu.value }, undefined, 1);
    if (!first.truncated) continue;
    const state = await dropdown(actions[getGroup.id]!.props, input.key).options({ [menuKey!]: menu.value });
    assert.equal(state.options.length, Math.min(first.total ?? 0, 1000), `${menu.label}: every group`);
    return;
  }
  t.skip('no menu of the key has more than one page of groups (the test dataset has one)');
});

test('without a connection a dropdown asks for one', async () => {
  const use = uses[0]!;
  const prop = use.owner[use.key] as { options: (values: Record<string, unknown>, ctx: object) => Promise<{ disabled?: boolean; placeholder?: string }> };
  const state = await prop.options({}, {});
  assert.equal(state.disabled, true);
  assert.match(state.placeholder ?? '', /Connect/);
});

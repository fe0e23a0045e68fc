import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runOperation } from '../src/lib/actions';
import { actions, connection, connectorGet, context, definition, dropdown } from './harness';

const operation = (id: string) => {
  const found = definition.operations.find((candidate) => candidate.id === id);
  assert.ok(found, `the manifest has operation ${id}`);
  return found;
};
const run = (id: string, propsValue: Record<string, unknown>) => actions[id]!.run(context({ propsValue }) as never) as Promise<unknown>;
type Row = Record<string, unknown>;

test('every operation is an action named by its id, with props named by its input keys', () => {
  assert.deepEqual(Object.keys(actions).sort(), definition.operations.map((candidate) => candidate.id).sort());
  for (const op of definition.operations) assert.deepEqual(Object.keys(actions[op.id]!.props).sort(), op.inputs.map((input) => input.key).sort(), op.id);
});

test('get_device finds the device chosen in its dropdown', async () => {
  const devices = (await dropdown(actions['get_device']!.props, 'device_id').options()).options;
  const chosen = devices[devices.length - 1]!;
  const device = (await run('get_device', { device_id: chosen.value.toUpperCase() })) as Row;
  assert.equal(String(device['id']).toLowerCase(), chosen.value.toLowerCase());
  assert.equal(device['name'], chosen.label);
  await assert.rejects(run('get_device', { device_id: '02:00:00:ff:ff:ff' }), /Device not found \(HTTP 404/);
});

test('list_devices reads every page up to the limit', async () => {
  const total = Number((((await connectorGet('/devices?page_size=1', true)).body as Row)['total']));
  assert.ok(total > 0);
  const all = (await run('list_devices', { limit: 10000 })) as Row[];
  assert.equal(all.length, total);
  assert.equal(((await run('list_devices', {})) as Row[]).length, Math.min(total, Number(operation('list_devices').inputs.find((input) => input.key === 'limit')!.default)));
  const online = (await run('list_devices', { is_online: true, limit: 10000 })) as Row[];
  for (const device of online) assert.equal(device['is_online'], true);
  await assert.rejects(run('list_devices', { limit: 0 }), /between 1 and 10000/);

  // Pages smaller than the limit: the same devices, in order, none twice.
  const smallPages = { ...operation('list_devices'), paging: { ...operation('list_devices').paging!, maxSize: 100 } };
  const paged = (await runOperation(smallPages, connection(), { limit: 250 })) as Row[];
  assert.equal(paged.length, Math.min(250, total));
  assert.deepEqual(paged.map((device) => device['id']), all.slice(0, 250).map((device) => device['id']));
});

test('list_menus lists the menus', async () => {
  const menus = (await run('list_menus', {})) as Row[];
  const choices = (await dropdown(actions['list_groups']!.props, 'menu_id').options()).options;
  assert.deepEqual(menus.map((menu) => menu['id']).sort(), choices.map((choice) => choice.value).sort());
});

test('list_groups: a menu, or tags at any depth', async () => {
  const menus = (await dropdown(actions['list_groups']!.props, 'menu_id').options()).options;
  const groups = (await run('list_groups', { menu_id: menus[0]!.value })) as Row[];
  assert.ok(groups.length > 0);
  const every = (await run('list_groups', {})) as Row[];
  assert.ok(every.length >= groups.length);
  const tagged = every.flatMap(function walk(group: Row): Row[] {
    return [group, ...((group['groups'] as Row[] | undefined) ?? []).flatMap(walk)];
  }).find((group) => Array.isArray(group['tags']) && group['tags'].length > 0);
  if (tagged) {
    const tag = String((tagged['tags'] as string[])[0]);
    const byTag = (await run('list_groups', { tags: [tag] })) as Row[];
    assert.ok(byTag.some((group) => group['id'] === tagged['id']), `tag ${tag} finds ${String(tagged['name'])}`);
  }
});

test('get_group finds the group chosen in the dropdown of the chosen menu', async () => {
  const props = actions['get_group']!.props;
  const menus = (await dropdown(props, 'menu_id').options()).options;
  for (const menu of menus.slice(0, 2)) {
    const groups = (await dropdown(props, 'group_id').options({ menu_id: menu.value })).options;
    const chosen = groups[groups.length - 1]!;
    const group = (await run('get_group', { menu_id: menu.value, group_id: chosen.value })) as Row;
    assert.equal(group['id'], chosen.value);
    assert.ok(chosen.label.endsWith(String(group['name'])), `${chosen.label} is the path of ${String(group['name'])}`);
  }
  await assert.rejects(run('get_group', { menu_id: menus[0]!.value, group_id: '00000000-0000-4000-8000-000000000000' }), /Group not found/);
  await assert.rejects(run('get_group', { menu_id: menus[0]!.value }), /Group is required/);
});

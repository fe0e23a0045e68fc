import { z } from 'zod';
import { listParam } from '../query.js';
import { GroupList, MenuList } from '../responses.js';
import { defineRoute, type RouteAuth } from '../route.js';

/** docs/menus.md: the menu area, `X-API-Key`, scope `menu:read`. */
const auth = { keys: 'menu', headers: 'x-api-key', scopes: ['menu:read'] } as const satisfies RouteAuth;

const groupFilter = (name: string, what: string) =>
  listParam(name).optional().describe(`${what}, comma-separated; the parameter may repeat. Values are OR-ed, filters AND-ed.`);

const groupsQuery = z.object({
  menus: groupFilter('menus', 'Menu ids'),
  groups: groupFilter('groups', 'Group ids (matched at any depth)'),
  tags: groupFilter('tags', 'Tags (matched at any depth); `key:*` matches every tag starting with `key:`'),
});

export const listMenus = defineRoute({
  method: 'get',
  path: '/v1/menus',
  operationId: 'listMenus',
  tag: 'Menus',
  summary: 'List menus',
  description: 'The menus of the key’s account, with their top-level group count.',
  auth,
  responses: { 200: { description: 'The menus.', schema: MenuList } },
  async handler({ res, services, principal }) {
    const menus = await services.menus.listMenus(principal);
    res.json({ metadata: { menus: { total: menus.length } }, menus });
  },
});

export const listGroups = defineRoute({
  method: 'get',
  path: '/v1/groups',
  operationId: 'listGroups',
  tag: 'Menus',
  summary: 'Group trees',
  description:
    'No filter: the top-level groups of every menu. `menus` only: the top-level groups of those menus. `groups` / `tags`: every matching group at any depth as a top-level entry with its whole subtree (a match inside a returned subtree is not repeated); `menus` narrows the search.',
  auth,
  query: groupsQuery,
  responses: { 200: { description: 'Groups in source order; every `metadata.*.total` equals its array.', schema: GroupList } },
  async handler({ res, services, principal, query }) {
    const groups = await services.menus.groups(principal, { menus: query.menus, groups: query.groups, tags: query.tags });
    res.json({ metadata: { groups: { total: groups.length } }, groups });
  },
});

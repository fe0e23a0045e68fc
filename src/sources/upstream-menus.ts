import type { CachedLoader } from '../cache/cached-loader.js';
import { callerOf, upstreamCall } from './upstream-call.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { KeyVerdicts } from '../upstream/key-verdicts.js';
import { groupsEnvelopeSchema, menusSchema } from '../upstream/schemas.js';
import type { Group, GroupFilter, Menu, MenuSource, Principal } from './types.js';

/**
 * Menus and groups from an upstream implementing docs/menus.md, the key forwarded as X-API-Key.
 * Filters are sent comma-joined (`menus`, `groups`, `tags`). A menu record without a group
 * count gets one from `/v1/groups?menus=<id>` (the upstream interface does not show menu records; docs/upstream.md).
 */
export function upstreamMenuSource(client: UpstreamClient, verdicts: KeyVerdicts, cache?: CachedLoader): MenuSource {
  const cached = upstreamCall(verdicts, cache);

  const groups = (principal: Principal, filter: GroupFilter): Promise<Group[]> => {
    const query = {
      menus: filter.menus?.join(','),
      groups: filter.groups?.join(','),
      tags: filter.tags?.join(','),
    };
    const key = `groups?m=${query.menus ?? ''}&g=${query.groups ?? ''}&t=${query.tags ?? ''}`;
    return cached(principal, key, () => client.get({ path: '/v1/groups', query, key: principal.key, ...callerOf(principal), schema: groupsEnvelopeSchema }));
  };

  return {
    mode: 'upstream',
    async listMenus(principal: Principal): Promise<Menu[]> {
      const menus = await cached(principal, 'menus', () => client.get({ path: '/v1/menus', key: principal.key, ...callerOf(principal), schema: menusSchema }));
      return Promise.all(
        menus.map(async (menu): Promise<Menu> => ({
          id: menu.id,
          name: menu.name,
          description: menu.description,
          tags: menu.tags,
          metadata: menu.metadata ?? { groups: { total: (await groups(principal, { menus: [menu.id] })).length } },
        })),
      );
    },
    groups,
  };
}

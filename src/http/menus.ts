import { Router } from 'express';
import type { Services } from '../services.js';
import { authenticate, principalOf } from '../auth/authenticate.js';
import { parseQuery } from './query.js';
import { groupsQuery } from './schemas.js';

/** docs/menus.md: the menu area, `X-API-Key`, scope `menu:read`. */
export function menuRoutes(services: Services): Router {
  const router = Router();
  const auth = authenticate({
    headers: 'x-api-key',
    scope: 'menu:read',
    verify: services.keys.menu,
    attempts: services.failedAttempts,
  });

  router.get('/v1/menus', auth, async (req, res) => {
    const menus = await services.menus.listMenus(principalOf(req));
    res.json({ metadata: { menus: { total: menus.length } }, menus });
  });

  router.get('/v1/groups', auth, async (req, res) => {
    const { menus, groups: groupIds, tags } = parseQuery(groupsQuery, req.query);
    const groups = await services.menus.groups(principalOf(req), { menus, groups: groupIds, tags });
    res.json({ metadata: { groups: { total: groups.length } }, groups });
  });

  return router;
}

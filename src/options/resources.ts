import { AppError } from '../errors.js';
import { devicePageSize } from '../sources/all-devices.js';
import type { DeviceSource, Group, Item, MenuSource, Principal } from '../sources/types.js';
import { flattenTree } from '../text/tree-paths.js';
import { resourceShapes, type ResourceShape } from '../manifest/resource-fields.js';

/** One record of a resource: the fields a manifest's templates may use. */
export type OptionRecord = Record<string, unknown> & {
  id: string;
  /** Tree resources: the parent record's id (null at the top) and whether it has children. */
  parent?: string | null;
  hasChildren?: boolean;
};

export interface ResourceSources {
  devices: DeviceSource;
  menus: MenuSource;
}

/**
 * The closed set of resources option sources can be built from (their fields and parameters
 * in manifest/resource-fields.ts) and how each is loaded. Which resource, label, value, order
 * and filters a dropdown uses is declared in manifests/, not here.
 */
export interface ResourceDef extends ResourceShape {
  load(sources: ResourceSources, principal: Principal, params: Record<string, string>): Promise<OptionRecord[]>;
}

/** A menu's groups depth first, in source order; `path` joins the names from the top (text/tree-paths.ts). */
function flattenGroups(groups: readonly Group[]): OptionRecord[] {
  return flattenTree(groups, (g) => ({ id: g.id, name: g.name, children: g.groups })).map(({ node: group, parentId, path, depth, hasChildren }) => ({
    id: group.id,
    name: group.name,
    description: group.description,
    path,
    depth,
    tags: group.tags.join(', '),
    parent: parentId,
    hasChildren,
  }));
}

function flattenItems(items: readonly Item[]): OptionRecord[] {
  return flattenTree(items, (i) => ({ id: i.id, name: i.name, children: i.items })).map(({ node: item, parentId, path, hasChildren }) => ({
    id: item.id,
    name: item.name,
    description: item.description,
    path,
    price: item.price,
    calories: item.calories,
    inStock: item.inStock,
    tags: item.tags.join(', '),
    parent: parentId,
    hasChildren,
  }));
}

export const resources: Record<string, ResourceDef> = {
  menus: {
    ...resourceShapes.menus,
    async load(sources, principal) {
      const menus = await sources.menus.listMenus(principal);
      return menus.map((m) => ({ id: m.id, name: m.name, description: m.description, tags: m.tags.join(', ') }));
    },
  },
  groups: {
    ...resourceShapes.groups,
    async load(sources, principal, { menuId }) {
      const groups = await sources.menus.groups(principal, { menus: [menuId!] });
      // An empty answer is either an empty menu or no menu at all: only then ask which.
      if (groups.length === 0) {
        const menus = await sources.menus.listMenus(principal);
        if (!menus.some((m) => m.id.toLowerCase() === menuId!.toLowerCase())) throw new AppError('not_found', 'Menu not found');
      }
      return flattenGroups(groups);
    },
  },
  items: {
    ...resourceShapes.items,
    async load(sources, principal, { groupId }) {
      const [group] = await sources.menus.groups(principal, { groups: [groupId!] });
      if (!group) throw new AppError('not_found', 'Group not found');
      return flattenItems(group.items);
    },
  },
  devices: {
    ...resourceShapes.devices,
    /** Page by page: only the fields a template may use are kept, never the whole devices. */
    async load(sources, principal) {
      const records: OptionRecord[] = [];
      for await (const page of sources.devices.pages(principal, devicePageSize)) {
        for (const d of page) {
          records.push({
            id: d.id.toLowerCase(),
            name: d.name,
            timezone: d.timezone,
            status: d.is_online ? 'online' : 'offline',
            is_online: d.is_online,
            screen_resolution: d.screen_resolution,
            connection_type: d.connection_type,
            last_heartbeat_at: d.last_heartbeat_at,
          });
        }
      }
      return records;
    },
  },
};

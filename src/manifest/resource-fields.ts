/**
 * The closed set of resources option sources can be built from, as a manifest sees them: the
 * area (hence scope), path parameters, fields its templates may use, and whether it is a tree.
 * Here, below options/, so the manifest schema can check a manifest without importing the
 * loaders (options/resources.ts adds how each resource is loaded).
 */
export interface ResourceShape {
  area: 'device' | 'menu';
  /** Path parameters the resource needs, e.g. `menuId`. */
  params: readonly string[];
  fields: readonly string[];
  /** Whether records form a tree (`parent`, `hasChildren`), enabling `format=tree`. */
  tree: boolean;
}

export const resourceShapes = {
  menus: { area: 'menu', params: [], fields: ['id', 'name', 'description', 'tags'], tree: false },
  groups: { area: 'menu', params: ['menuId'], fields: ['id', 'name', 'description', 'path', 'depth', 'tags'], tree: true },
  items: { area: 'menu', params: ['groupId'], fields: ['id', 'name', 'description', 'path', 'price', 'calories', 'inStock', 'tags'], tree: true },
  devices: {
    area: 'device',
    params: [],
    fields: ['id', 'name', 'timezone', 'status', 'is_online', 'screen_resolution', 'connection_type', 'last_heartbeat_at'],
    tree: false,
  },
} satisfies Record<string, ResourceShape>;

import type { Device } from './device.js';
import type { Group, Menu } from './menu.js';

/**
 * What the catalog's sources (src/sources/) are asked with and answer in pages; here, below
 * them, so the layers that read or shape the same pages (upstream/, menus/) need not look up.
 */

export interface DeviceQuery {
  isOnline?: boolean;
  /** Lower-case ids; undefined = no id filter. */
  ids?: string[];
  page: number;
  pageSize: number;
}

export interface DevicePage {
  total: number;
  data: Device[];
  /** Lower-case ids of this page's records left out as invalid (upstream mode; docs/upstream.md). */
  unreadable?: string[];
  /** How many records the upstream's page held, valid or not, when some were left out (upstream mode). */
  listed?: number;
}

/**
 * One page of a listing read to the end. `unreadable` (upstream mode only): devices the source
 * lists but whose records it could not read this time, so a poll keeps what it knew of them
 * instead of taking them for gone (docs/upstream.md, "Invalid records").
 */
export type DeviceBatch<D> = D[] & { unreadable?: readonly string[] };

/** A menu with its whole group tree. */
export interface MenuTree extends Menu {
  groups: Group[];
}

/** The filters of `GET /v1/groups` (docs/menus.md); each list is OR-ed, the lists AND-ed. */
export interface GroupFilter {
  menus?: string[];
  groups?: string[];
  tags?: string[];
}

import type { Device, DeviceState } from '../catalog/device.js';
import type { Group, Menu } from '../catalog/menu.js';
import type { DeviceBatch, DevicePage, DeviceQuery, GroupFilter } from '../catalog/source-queries.js';
import type { Principal } from '../auth/principal.js';
import type { RequestWaits } from '../db/wait-budget.js';

/**
 * The sources of the catalog (embedded or upstream). What they are asked with lives below them
 * (catalog/source-queries.ts, auth/principal.ts) and is re-exported here for their users.
 */

export type { Device } from '../catalog/device.js';
export type { Group, Item, Menu } from '../catalog/menu.js';
export type { DeviceBatch, DevicePage, DeviceQuery, GroupFilter, MenuTree } from '../catalog/source-queries.js';
export type { Principal } from '../auth/principal.js';

export interface DeviceSource {
  readonly mode: 'embedded' | 'upstream';
  list(principal: Principal, query: DeviceQuery): Promise<DevicePage>;
  /**
   * Every device the key may read, in list order, a page at a time: memory and each step stay
   * bounded by the page, whatever the account's size.
   */
  pages(principal: Principal, pageSize: number): AsyncIterable<DeviceBatch<Device>>;
  /**
   * What a poll compares, in the same pages (embedded mode): each device's id, heartbeat and
   * status only, so a poll of a big account reads no whole record but those that changed.
   */
  statePages?(principal: Principal, pageSize: number): AsyncIterable<DeviceBatch<DeviceState>>;
  /** The whole records of those of `ids` the key may read, in no particular order. */
  byIds?(principal: Principal, ids: readonly string[]): Promise<Device[]>;
  /** Throws AppError not_found `Device not found` when absent or not accessible. */
  get(principal: Principal, id: string): Promise<Device>;
  /** Embedded mode: this source as one request uses it, its database waits sharing the request's deadline (db/wait-budget.ts). */
  within?(waits: RequestWaits): DeviceSource;
}

export interface MenuSource {
  readonly mode: 'embedded' | 'upstream';
  listMenus(principal: Principal): Promise<Menu[]>;
  groups(principal: Principal, filter: GroupFilter): Promise<Group[]>;
  /** Embedded mode: this source as one request uses it, its database waits sharing the request's deadline (db/wait-budget.ts). */
  within?(waits: RequestWaits): MenuSource;
}

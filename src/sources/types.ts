import type { Device, DeviceState } from '../catalog/device.js';
import type { Group, Menu } from '../catalog/menu.js';

/** The sources of the catalog (embedded or upstream) and what they are asked with. */

export type { Device } from '../catalog/device.js';
export type { Group, Item, Menu } from '../catalog/menu.js';

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

/** Who is asking. `scopes: null` means an upstream decides (upstream mode). */
export interface Principal {
  keyHash: string;
  /** The raw key, kept in memory only, to forward upstream. Never logged. */
  key: string;
  scopes: ReadonlySet<string> | null;
  keyId: string | null;
  keyName: string | null;
  userId: string | null;
  accountId: string | null;
  accountName: string | null;
  /** Embedded mode: the key's own rate limit (null or absent = RATE_LIMIT_PER_MINUTE; docs/keys.md). */
  rateLimitPerMinute?: number | null;
  /** The request this principal arrived with; forwarded upstream as `X-Request-Id`. */
  requestId?: string;
  /** Its caller's address (chain), forwarded upstream as `X-Forwarded-For`; unset in background work. */
  forwardedFor?: string;
  /**
   * Aborts upstream calls made for this principal when its work is stopped (a background poll
   * at shutdown). Only for uncached sources, as the poller's: a cached load may be shared by
   * other callers, whom one caller's stop must not fail.
   */
  signal?: AbortSignal;
}

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
}

export interface MenuSource {
  readonly mode: 'embedded' | 'upstream';
  listMenus(principal: Principal): Promise<Menu[]>;
  groups(principal: Principal, filter: GroupFilter): Promise<Group[]>;
}

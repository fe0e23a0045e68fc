import type { z } from 'zod';
import type { Device as DeviceSchema, Group as GroupSchema, Item as ItemSchema, Menu as MenuSchema } from '../http/responses.js';

/** The catalog as the rest of the app sees it, whichever source (embedded or upstream) serves it. */

/**
 * A device (seed 2.1), exactly as the response schema in http/responses.ts describes it.
 * `id` is lower case here; the device-list route prints it upper case.
 */
export type Device = z.infer<typeof DeviceSchema>;

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
}

/** An item (seed 2.3), a group (seed 2.2) and a menu (CONTRACT 5), as their response schemas describe them. */
export type Item = z.infer<typeof ItemSchema>;
export type Group = z.infer<typeof GroupSchema>;
export type Menu = z.infer<typeof MenuSchema>;

/** A menu with its whole group tree. */
export interface MenuTree extends Menu {
  groups: Group[];
}

/** CONTRACT 5 filters of `GET /v1/groups`; each list is OR-ed, the lists AND-ed. */
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
  /** The request this principal arrived with; forwarded upstream as `X-Request-Id`. */
  requestId?: string;
  /** Its caller's address (chain), forwarded upstream as `X-Forwarded-For`; unset in background work. */
  forwardedFor?: string;
}

export interface DeviceSource {
  readonly mode: 'embedded' | 'upstream';
  list(principal: Principal, query: DeviceQuery): Promise<DevicePage>;
  /** Throws AppError not_found `Device not found` when absent or not accessible. */
  get(principal: Principal, id: string): Promise<Device>;
}

export interface MenuSource {
  readonly mode: 'embedded' | 'upstream';
  listMenus(principal: Principal): Promise<Menu[]>;
  groups(principal: Principal, filter: GroupFilter): Promise<Group[]>;
}

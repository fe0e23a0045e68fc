/** The catalog as the rest of the app sees it, whichever source (embedded or upstream) serves it. */

/** Seed 2.1. `id` is lower case here; the device-list route prints it upper case. */
export interface Device {
  id: string;
  name: string;
  timezone: string;
  screen_resolution: string;
  screen_orientation: string;
  registered_at: string;
  published_at: string | null;
  last_heartbeat_at: string | null;
  is_online: boolean;
  offline_startup: boolean;
  offline_startup_delay_minutes: number;
  open_dev_tools: boolean;
  display_connected: boolean;
  connection_type: string;
  wifi_ssid: string | null;
  wifi_signal_strength: number | null;
  updated_at: string;
  created_at: string;
}

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

/** Seed 2.3. */
export interface Item {
  metadata: { items: { total: number } };
  id: string;
  name: string;
  description: string | null;
  price: number | null;
  calories: number | null;
  tags: string[];
  inStock: boolean;
  items: Item[];
}

/** Seed 2.2. */
export interface Group {
  metadata: { groups: { total: number }; items: { total: number } };
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  groups: Group[];
  items: Item[];
}

/** CONTRACT 5: a menu record of `GET /v1/menus`. */
export interface Menu {
  id: string;
  name: string;
  description: string | null;
  tags: string[];
  metadata: { groups: { total: number } };
}

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

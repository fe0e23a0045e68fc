/**
 * Schema migrations, applied in order; the index + 1 is the schema version (`user_version`).
 * Never edit a released entry: append a new one.
 *
 * Timestamps are stored as fixed-width `YYYY-MM-DDTHH:MM:SS.ffffffZ` strings, which sort in
 * time order. Device ids are stored lower case. A menu's group tree is stored as one JSON
 * document already in the seed's output shape (with `metadata` totals), because the menu area
 * always reads whole subtrees and an import replaces a menu's tree as a unit.
 */
export const migrations: string[] = [
  `
  CREATE TABLE accounts (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL
  );
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    name TEXT NOT NULL
  );
  CREATE INDEX users_account ON users(account_id);
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    key_sha256 TEXT NOT NULL UNIQUE,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE TABLE devices (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    timezone TEXT NOT NULL,
    screen_resolution TEXT NOT NULL,
    screen_orientation TEXT NOT NULL,
    registered_at TEXT NOT NULL,
    published_at TEXT,
    last_heartbeat_at TEXT,
    offline_startup INTEGER NOT NULL,
    offline_startup_delay_minutes INTEGER NOT NULL,
    open_dev_tools INTEGER NOT NULL,
    display_connected INTEGER NOT NULL,
    connection_type TEXT NOT NULL,
    wifi_ssid TEXT,
    wifi_signal_strength INTEGER,
    updated_at TEXT NOT NULL,
    created_at TEXT NOT NULL
  );
  CREATE INDEX devices_order ON devices(registered_at, id);
  CREATE TABLE device_access (
    device_id TEXT NOT NULL REFERENCES devices(id) ON DELETE CASCADE,
    user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    level TEXT NOT NULL CHECK (level IN ('read', 'update')),
    PRIMARY KEY (user_id, device_id)
  ) WITHOUT ROWID;
  CREATE INDEX device_access_device ON device_access(device_id);
  CREATE TABLE menus (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    tags TEXT NOT NULL,
    groups_json TEXT NOT NULL,
    revision INTEGER NOT NULL
  );
  CREATE INDEX menus_account ON menus(account_id, position, id);
  `,
];

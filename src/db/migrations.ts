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
  `
  -- Connector state (CONTRACT 6.3, 6.4): watched keys, device status snapshots, the event
  -- log, hooks and their delivery queue (an outbox written in the poller's transaction).
  CREATE TABLE watches (
    key_hash TEXT PRIMARY KEY,
    user_id TEXT,
    key_cipher TEXT,
    last_trigger_at INTEGER,
    baseline_at INTEGER,
    paused_reason TEXT,
    created_at INTEGER NOT NULL
  );
  CREATE TABLE device_snapshots (
    key_hash TEXT NOT NULL REFERENCES watches(key_hash) ON DELETE CASCADE,
    device_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('online', 'offline')),
    last_heartbeat_at TEXT,
    PRIMARY KEY (key_hash, device_id)
  ) WITHOUT ROWID;
  CREATE TABLE events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL,
    key_hash TEXT NOT NULL,
    type TEXT NOT NULL,
    device_id TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (key_hash, id)
  );
  CREATE INDEX events_created ON events(created_at);
  CREATE TABLE hooks (
    id TEXT PRIMARY KEY,
    key_hash TEXT NOT NULL,
    target_url TEXT NOT NULL,
    events TEXT NOT NULL,
    device_ids TEXT,
    secret_cipher TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'paused', 'disabled')),
    status_reason TEXT,
    created_at TEXT NOT NULL
  );
  CREATE INDEX hooks_key ON hooks(key_hash);
  CREATE TABLE deliveries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    hook_id TEXT NOT NULL REFERENCES hooks(id) ON DELETE CASCADE,
    event_seq INTEGER NOT NULL REFERENCES events(seq) ON DELETE CASCADE,
    webhook_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead', 'cancelled')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    leased_until INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    UNIQUE (hook_id, event_seq)
  );
  CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
  CREATE TABLE delivery_attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_id INTEGER NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
    hook_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    webhook_id TEXT NOT NULL,
    attempt INTEGER NOT NULL,
    status_code INTEGER,
    error TEXT,
    duration_ms INTEGER NOT NULL,
    attempted_at TEXT NOT NULL,
    next_attempt_at TEXT,
    outcome TEXT NOT NULL
  );
  CREATE INDEX delivery_attempts_hook ON delivery_attempts(hook_id, id);
  `,
];


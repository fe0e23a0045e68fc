import type { Engine } from './engine.js';
import { types, type Types } from './migration-types.js';

/**
 * Schema migrations, applied in order on either engine; the index + 1 is the schema version
 * (SQLite `user_version`, PostgreSQL `schema_version`). Never edit a released entry: append.
 * On SQLite each renders exactly the statements earlier releases ran.
 *
 * Catalog timestamps are stored as fixed-width `YYYY-MM-DDTHH:MM:SS.ffffffZ` strings, which
 * sort in time order. Device ids are stored lower case. A menu's group tree is stored as one
 * JSON document already in the output shape (with `metadata` totals), because the menu area
 * always reads whole subtrees and an import replaces a menu's tree as a unit.
 */
export const migrations: Array<(t: Types) => string> = [
  (t) => `
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
  ) ${t.withoutRowid};
  CREATE INDEX device_access_device ON device_access(device_id);
  CREATE TABLE menus (
    id TEXT PRIMARY KEY,
    account_id TEXT NOT NULL REFERENCES accounts(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    name TEXT NOT NULL,
    description TEXT,
    tags TEXT NOT NULL,
    groups_json TEXT NOT NULL,
    revision ${t.int8} NOT NULL
  );
  CREATE INDEX menus_account ON menus(account_id, position, id);
  `,
  (t) => `
  -- Connector state (docs/triggers.md, docs/webhooks.md): watched keys, device status snapshots, the event
  -- log, hooks and their delivery queue (an outbox written in the poller's transaction).
  CREATE TABLE watches (
    key_hash TEXT PRIMARY KEY,
    user_id TEXT,
    key_cipher TEXT,
    last_trigger_at ${t.int8},
    baseline_at ${t.int8},
    paused_reason TEXT,
    created_at ${t.int8} NOT NULL
  );
  CREATE TABLE device_snapshots (
    key_hash TEXT NOT NULL REFERENCES watches(key_hash) ON DELETE CASCADE,
    device_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('online', 'offline')),
    last_heartbeat_at TEXT,
    PRIMARY KEY (key_hash, device_id)
  ) ${t.withoutRowid};
  CREATE TABLE events (
    seq ${t.serial},
    id TEXT NOT NULL,
    key_hash TEXT NOT NULL,
    type TEXT NOT NULL,
    device_id TEXT NOT NULL,
    occurred_at TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at ${t.int8} NOT NULL,
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
    id ${t.serial},
    hook_id TEXT NOT NULL REFERENCES hooks(id) ON DELETE CASCADE,
    event_seq ${t.int8} NOT NULL REFERENCES events(seq) ON DELETE CASCADE,
    webhook_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'dead', 'cancelled')),
    attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_at ${t.int8} NOT NULL,
    leased_until ${t.int8} NOT NULL DEFAULT 0,
    created_at ${t.int8} NOT NULL,
    UNIQUE (hook_id, event_seq)
  );
  CREATE INDEX deliveries_due ON deliveries(status, next_attempt_at);
  CREATE TABLE delivery_attempts (
    id ${t.serial},
    delivery_id ${t.int8} NOT NULL REFERENCES deliveries(id) ON DELETE CASCADE,
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
  (t) => `
  -- Several replicas (README, "Running several replicas"): a poll lease per watched key, hook identities that make
  -- concurrent identical subscriptions one hook, each hook's target origin (deliveries are
  -- claimed per origin, so one slow receiver never holds up the others), and the
  -- failed-attempt counters.
  ALTER TABLE watches ADD COLUMN next_poll_at ${t.int8} NOT NULL DEFAULT 0;
  ALTER TABLE watches ADD COLUMN leased_until ${t.int8} NOT NULL DEFAULT 0;
  ALTER TABLE watches ADD COLUMN lease_owner TEXT;
  CREATE INDEX watches_due ON watches(next_poll_at);
  ALTER TABLE hooks ADD COLUMN identity TEXT;
  ALTER TABLE hooks ADD COLUMN target_origin TEXT;
  CREATE UNIQUE INDEX hooks_identity ON hooks(identity) WHERE status <> 'disabled';
  CREATE INDEX events_key_seq ON events(key_hash, seq);
  CREATE INDEX deliveries_hook ON deliveries(hook_id, status);
  CREATE TABLE failed_attempts (
    client TEXT PRIMARY KEY,
    window_start ${t.int8} NOT NULL,
    failures INTEGER NOT NULL
  );
  `,
  () => `
  -- /readyz writes here: a database that can be read but not written (a full disk, a
  -- read-only replica) is not ready.
  CREATE TABLE readiness_probe (
    id INTEGER PRIMARY KEY,
    checked_at TEXT NOT NULL
  );
  `,
  (t) => `
  -- Retention (docs/webhooks.md): disabled hooks are deleted 7 days after they were disabled;
  -- an event is kept while a delivery of it is pending or was attempted in the last 7 days.
  ALTER TABLE hooks ADD COLUMN disabled_at ${t.int8};
  CREATE INDEX deliveries_event ON deliveries(event_seq);
  CREATE INDEX delivery_attempts_delivery ON delivery_attempts(delivery_id);
  -- Fairness (docs/webhooks.md): due deliveries are taken in the order of a per-hook virtual
  -- time, so one hook's backlog delays only that hook.
  ALTER TABLE deliveries ADD COLUMN fair_at ${t.int8} NOT NULL DEFAULT 0;
  UPDATE deliveries SET fair_at = next_attempt_at;
  ALTER TABLE hooks ADD COLUMN fair_cursor ${t.int8} NOT NULL DEFAULT 0;
  CREATE INDEX deliveries_fair ON deliveries(status, fair_at, next_attempt_at);
  `,
  () => `
  -- A user's devices in their list order straight from one index (docs/devices.md): pages
  -- and counts of an account with 100,000 devices read only what they return.
  ALTER TABLE device_access ADD COLUMN registered_at TEXT NOT NULL DEFAULT '';
  UPDATE device_access SET registered_at = (SELECT d.registered_at FROM devices d WHERE d.id = device_access.device_id);
  CREATE INDEX device_access_order ON device_access(user_id, registered_at, device_id);
  `,
  () => `
  -- Where the catalog came from (docs/datasets.md): 'demo' while it is the bundled demo as
  -- imported, 'dataset' once any other dataset was imported. One row, id 1.
  CREATE TABLE catalog_origin (
    id INTEGER PRIMARY KEY,
    origin TEXT NOT NULL CHECK (origin IN ('demo', 'dataset')),
    imported_at TEXT NOT NULL
  );
  `,
  (t) => `
  -- Device dropdowns answered from the database (docs/options.md, "Big accounts"): each access
  -- row carries its device's label sort key (NULL when the name is not covered) and its name
  -- folded for q; the migration's backfill fills them for existing rows.
  ALTER TABLE device_access ADD COLUMN sort_key TEXT ${t.bytewise};
  ALTER TABLE device_access ADD COLUMN folded TEXT;
  CREATE INDEX device_access_label ON device_access(user_id, sort_key, registered_at, device_id${t.labelIndexTail});
  `,
  (t) => `
  -- The deliverer's claim in fair order straight from one index on PostgreSQL too
  -- (webhooks/postgres-delivery-store.ts).
  ${t.fairOrderIndex}
  `,
  (t) => `
  -- Group dropdowns answered from the database (docs/options.md, "Big accounts"): every group of
  -- a menu at any depth, in the menu's depth-first source order, with the label it shows and
  -- the folded forms q searches; the migration's backfill fills it from groups_json.
  CREATE TABLE menu_groups (
    menu_id TEXT NOT NULL REFERENCES menus(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    id TEXT NOT NULL,
    parent_id TEXT,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    has_children INTEGER NOT NULL,
    folded_path TEXT NOT NULL,
    folded_name TEXT NOT NULL,
    PRIMARY KEY (menu_id, position)
  ) ${t.withoutRowid};
  CREATE INDEX menu_groups_parent ON menu_groups(menu_id, parent_id, position);
  `,
  () => `
  -- Fairness (docs/webhooks.md): a target origin's virtual time is the smallest fair_at among
  -- its pending deliveries, across every key's hooks. Each delivery carries its hook's origin
  -- (a hook's target never changes), so that time is one step on a small index of pending
  -- deliveries only. Finished deliveries are never read by it and are left without one.
  -- A hook's own first pending fair_at (is it backlogged?) is one step too: deliveries_hook
  -- gains fair_at, and still serves what it served by its prefix.
  ALTER TABLE deliveries ADD COLUMN target_origin TEXT;
  UPDATE deliveries SET target_origin = (SELECT coalesce(h.target_origin, 'invalid') FROM hooks h WHERE h.id = deliveries.hook_id)
    WHERE status = 'pending';
  CREATE INDEX deliveries_origin_head ON deliveries(target_origin, fair_at) WHERE status = 'pending';
  CREATE INDEX deliveries_hook_head ON deliveries(hook_id, status, fair_at);
  DROP INDEX deliveries_hook;
  `,
  (t) => `
  -- Operating webhooks (docs/webhooks.md, "When something goes wrong"): a rotated secret is
  -- kept sealed beside the new one until its overlap ends (deliveries carry both signatures
  -- meanwhile); every attempt keeps the request headers it sent (never the secret) and the
  -- first 1,024 bytes of the answer; a hook's deliveries page newest first from one index.
  ALTER TABLE hooks ADD COLUMN secret_previous_cipher TEXT;
  ALTER TABLE hooks ADD COLUMN secret_previous_until ${t.int8};
  ALTER TABLE delivery_attempts ADD COLUMN request_headers TEXT;
  ALTER TABLE delivery_attempts ADD COLUMN response_body TEXT;
  CREATE INDEX deliveries_hook_order ON deliveries(hook_id, id);
  `,
  (t) => `
  -- Key lifecycle (docs/keys.md): first 8 characters (NULL when imported by hash), last use (to
  -- the minute), expiry, revocation, own rate limit (NULL = RATE_LIMIT_PER_MINUTE).
  ALTER TABLE api_keys ADD COLUMN prefix TEXT;
  ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
  ALTER TABLE api_keys ADD COLUMN expires_at TEXT;
  ALTER TABLE api_keys ADD COLUMN revoked_at TEXT;
  ALTER TABLE api_keys ADD COLUMN rate_limit_per_minute INTEGER;
  CREATE INDEX api_keys_user ON api_keys(user_id, id);
  -- The per-key rate limit shared by the replicas: a GCRA arrival time (µs), the last grant.
  CREATE TABLE rate_limits (key_hash TEXT PRIMARY KEY, tat ${t.int8} NOT NULL, granted INTEGER NOT NULL);
  `,
  (t) => `
  -- Transitions from an upstream (docs/triggers.md): a device left out of the listings keeps its
  -- snapshot row, marked missing (pruned after the events' retention), so a device that comes
  -- back is compared with what was last known of it; each row keeps its device's last event
  -- (the next event's id chains on its id, and its occurred_at never precedes it).
  ALTER TABLE device_snapshots ADD COLUMN missing_since ${t.int8};
  ALTER TABLE device_snapshots ADD COLUMN last_event_id TEXT;
  ALTER TABLE device_snapshots ADD COLUMN last_event_at TEXT;
  CREATE INDEX device_snapshots_missing ON device_snapshots(missing_since) WHERE missing_since IS NOT NULL;
  `,
  () => `
  -- A bounded attempt log (docs/webhooks.md, "The attempt log"): a delivery keeps its first
  -- attempt and its latest ones; how many went between them is counted here.
  ALTER TABLE deliveries ADD COLUMN attempts_dropped INTEGER NOT NULL DEFAULT 0;
  `,
  () => `
  -- A digest of the statuses in a small key's snapshot (docs/triggers.md): a poll whose listing has
  -- the same digest changed nothing, and reads no snapshot row. NULL: compare row by row.
  ALTER TABLE watches ADD COLUMN snapshot_digest TEXT;
  `,
  (t) => `
  -- PostgreSQL: a lease is leased_until alone, in no index: a heap-only update, given room on the
  -- page (fill factor); fair-order and due indexes leave delivered rows out (webhooks/delivery-store.ts).
  -- SQLite keeps its indexes and its lease (migration-types.ts).
  ${t.pendingIndexes}
  `,
];

export function renderMigration(index: number, engine: Engine): string {
  return migrations[index]!(types[engine]);
}

/**
 * Row types of every table, declared once for both engines (Kysely's table interfaces).
 * Instants the connector itself keeps (`*_at` numbers) are epoch milliseconds (BIGINT on
 * PostgreSQL, read back as numbers); catalog timestamps are fixed-width
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ` strings, which sort in time order. Booleans are 0/1 integers
 * and lists are JSON text on both engines, so one query serves both.
 */
import type { Generated } from 'kysely';

export interface Tables {
  accounts: { id: string; name: string };
  users: { id: string; account_id: string; name: string };
  api_keys: {
    id: string;
    user_id: string;
    name: string;
    key_sha256: string;
    scopes: string;
    created_at: string;
    /** The key's first 8 characters (null: imported by its hash alone). */
    prefix: string | null;
    /** Catalog timestamps; `last_used_at` to the minute. */
    last_used_at: string | null;
    expires_at: string | null;
    revoked_at: string | null;
    /** The key's own limit; null = RATE_LIMIT_PER_MINUTE. */
    rate_limit_per_minute: number | null;
  };
  /** The per-key rate limit's shared state (auth/rate-limit-store.ts). */
  rate_limits: { key_hash: string; tat: number; granted: number };
  devices: DeviceRow;
  /**
   * `registered_at` is the device's, copied so that a user's devices page in order from one index;
   * `sort_key` and `folded` are its dropdown label's sort key (null when not covered) and
   * search form (src/text/label-order.ts), so big dropdowns page in the database.
   */
  device_access: {
    device_id: string;
    user_id: string;
    level: 'read' | 'update';
    registered_at: string;
    sort_key: string | null;
    folded: string | null;
  };
  menus: {
    id: string;
    account_id: string;
    position: number;
    name: string;
    description: string | null;
    tags: string;
    groups_json: string;
    revision: number;
  };
  menu_groups: {
    menu_id: string;
    position: number;
    id: string;
    parent_id: string | null;
    name: string;
    path: string;
    has_children: number;
    folded_path: string;
    folded_name: string;
  };
  watches: {
    key_hash: string;
    user_id: string | null;
    key_cipher: string | null;
    last_trigger_at: number | null;
    baseline_at: number | null;
    paused_reason: string | null;
    created_at: number;
    /** When the key is next due for a poll. */
    next_poll_at: Generated<number>;
    /** A replica polling the key holds it until then (0 = free). */
    leased_until: Generated<number>;
    lease_owner: string | null;
    /** The digest of the statuses in the key's snapshot when it is small (poll-comparison.ts); null: none. */
    snapshot_digest: string | null;
  };
  device_snapshots: {
    key_hash: string;
    device_id: string;
    status: 'online' | 'offline';
    last_heartbeat_at: string | null;
    /** When the device was first left out of the key's listings (null: listed); pruned after the retention. */
    missing_since: number | null;
    last_event_id: string | null;
    last_event_at: string | null;
  };
  events: {
    seq: Generated<number>;
    id: string;
    key_hash: string;
    type: string;
    device_id: string;
    occurred_at: string;
    payload: string;
    created_at: number;
  };
  hooks: {
    id: string;
    key_hash: string;
    target_url: string;
    events: string;
    device_ids: string | null;
    secret_cipher: string;
    status: 'active' | 'paused' | 'disabled';
    status_reason: string | null;
    created_at: string;
    /** SHA-256 of key + URL + events + device ids: unique among hooks that are not disabled. */
    identity: string | null;
    /** `scheme://host:port` of the target: the unit of per-target delivery concurrency. */
    target_origin: string | null;
    /** When the hook was disabled (ms); it is deleted a retention period later. */
    disabled_at: number | null;
    /** The virtual time of the hook's last queued delivery (fairness). */
    fair_cursor: Generated<number>;
    /** The secret replaced by the last rotation, sealed, while deliveries are still signed with it too. */
    secret_previous_cipher: string | null;
    /** When the rotated-away secret stops signing (ms). */
    secret_previous_until: number | null;
  };
  deliveries: {
    id: Generated<number>;
    hook_id: string;
    event_seq: number;
    webhook_id: string;
    status: 'pending' | 'delivered' | 'dead' | 'cancelled';
    attempts: Generated<number>;
    next_attempt_at: number;
    leased_until: Generated<number>;
    created_at: number;
    /** The delivery's place in its origin's queue: a per-hook virtual time (docs/webhooks.md, fairness). */
    fair_at: Generated<number>;
    /** Its hook's target origin, kept while pending: the origin's virtual time is read by it (fan-out.ts). */
    target_origin: string | null;
    /** Attempts dropped from its log between the first and the latest kept (attempt-log.ts `trimAttempts`). */
    attempts_dropped: Generated<number>;
  };
  delivery_attempts: {
    id: Generated<number>;
    delivery_id: number;
    hook_id: string;
    event_id: string;
    webhook_id: string;
    attempt: number;
    status_code: number | null;
    error: string | null;
    duration_ms: number;
    attempted_at: string;
    next_attempt_at: string | null;
    outcome: string;
    /** The request headers sent, as JSON (the signature, never the secret); null before migration 12. */
    request_headers: string | null;
    /** The first 1,024 bytes of the answer's body, as text; null when no answer came. */
    response_body: string | null;
  };
  failed_attempts: { client: string; window_start: number; failures: number };
  readiness_probe: { id: number; checked_at: string };
  /** One row (id 1): whether the catalog is still the bundled demo as imported. */
  catalog_origin: { id: number; origin: CatalogOrigin; imported_at: string };
}

/** `demo`: the catalog is the bundled demo dataset as imported; `dataset`: another import followed. */
export type CatalogOrigin = 'demo' | 'dataset';

export interface DeviceRow {
  id: string;
  name: string;
  timezone: string;
  screen_resolution: string;
  screen_orientation: string;
  registered_at: string;
  published_at: string | null;
  last_heartbeat_at: string | null;
  offline_startup: number;
  offline_startup_delay_minutes: number;
  open_dev_tools: number;
  display_connected: number;
  connection_type: string;
  wifi_ssid: string | null;
  wifi_signal_strength: number | null;
  updated_at: string;
  created_at: string;
}

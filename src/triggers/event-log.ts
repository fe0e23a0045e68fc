import type { Db } from '../db/database.js';
import { AppError } from '../errors.js';
import type { Clock } from '../time/timestamps.js';
import type { DeviceEvent, EventType, Snapshot } from './transitions.js';

const retentionMs = 7 * 86_400_000;

export interface RecentFilter {
  types?: EventType[];
  devices?: string[];
  limit: number;
}

/**
 * The per-key event log and the poller's snapshot writes. Events are stored as their JSON,
 * so reads splice stored text into the response instead of re-serialising.
 */
export class EventLog {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  snapshot(keyHash: string): Map<string, Snapshot> {
    const rows = this.db
      .prepare('SELECT device_id, status, last_heartbeat_at FROM device_snapshots WHERE key_hash = ?')
      .all(keyHash) as Array<Snapshot & { device_id: string }>;
    return new Map(rows.map((r) => [r.device_id, { status: r.status, last_heartbeat_at: r.last_heartbeat_at }]));
  }

  /**
   * In one transaction: the new snapshot (changed rows only), the new events (an id already
   * logged for the key is ignored), a delivery per matching active hook, and the baseline
   * mark. Returns the events that were new.
   */
  record(keyHash: string, previous: Map<string, Snapshot>, next: Map<string, Snapshot>, events: DeviceEvent[], baseline: boolean): DeviceEvent[] {
    const now = this.clock.now();
    const upsert = this.db.prepare(`INSERT INTO device_snapshots (key_hash, device_id, status, last_heartbeat_at) VALUES (?, ?, ?, ?)
      ON CONFLICT(key_hash, device_id) DO UPDATE SET status = excluded.status, last_heartbeat_at = excluded.last_heartbeat_at`);
    const drop = this.db.prepare('DELETE FROM device_snapshots WHERE key_hash = ? AND device_id = ?');
    const insertEvent = this.db.prepare(`INSERT OR IGNORE INTO events (id, key_hash, type, device_id, occurred_at, payload, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?)`);
    const hooks = this.db.prepare(`SELECT id, events, device_ids FROM hooks WHERE key_hash = ? AND status = 'active'`);
    const enqueue = this.db.prepare(`INSERT OR IGNORE INTO deliveries (hook_id, event_seq, webhook_id, status, next_attempt_at, created_at)
      VALUES (?, ?, ?, 'pending', ?, ?)`);
    return this.db.transaction(() => {
      for (const [id, snap] of next) {
        const before = previous.get(id);
        if (!before || before.status !== snap.status || before.last_heartbeat_at !== snap.last_heartbeat_at) {
          upsert.run(keyHash, id, snap.status, snap.last_heartbeat_at);
        }
      }
      for (const id of previous.keys()) if (!next.has(id)) drop.run(keyHash, id);
      if (baseline) this.db.prepare('UPDATE watches SET baseline_at = ? WHERE key_hash = ?').run(now, keyHash);
      const fresh: DeviceEvent[] = [];
      const activeHooks = events.length ? (hooks.all(keyHash) as Array<{ id: string; events: string; device_ids: string | null }>) : [];
      for (const event of events) {
        const result = insertEvent.run(event.id, keyHash, event.type, event.device.id, event.occurred_at, JSON.stringify(event), now);
        if (result.changes === 0) continue;
        fresh.push(event);
        for (const hook of activeHooks) {
          const types = JSON.parse(hook.events) as string[];
          const devices = hook.device_ids ? (JSON.parse(hook.device_ids) as string[]) : null;
          if (!types.includes(event.type) || (devices && !devices.includes(event.device.id))) continue;
          enqueue.run(hook.id, result.lastInsertRowid, webhookId(hook.id, event.id), now, now);
        }
      }
      return fresh;
    })();
  }

  /** Newest first (the polling trigger). */
  recent(keyHash: string, filter: RecentFilter): string[] {
    const where = ['key_hash = @key'];
    if (filter.types) where.push('type IN (SELECT value FROM json_each(@types))');
    if (filter.devices) where.push('device_id IN (SELECT value FROM json_each(@devices))');
    return this.db
      .prepare(`SELECT payload FROM events WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT @limit`)
      .pluck()
      .all({ key: keyHash, types: JSON.stringify(filter.types ?? []), devices: JSON.stringify(filter.devices ?? []), limit: filter.limit }) as string[];
  }

  /** Oldest first, after the event `afterId` (replay). An unknown id is a 400 naming `after`. */
  after(keyHash: string, afterId: string | undefined, limit: number): string[] {
    let seq = 0;
    if (afterId !== undefined) {
      const found = this.db.prepare('SELECT seq FROM events WHERE key_hash = ? AND id = ?').pluck().get(keyHash, afterId);
      if (found === undefined) {
        const message = 'after must be the id of an event in your log (events are kept 7 days)';
        throw new AppError('validation', message, [{ path: 'after', message }]);
      }
      seq = found as number;
    }
    return this.db
      .prepare('SELECT payload FROM events WHERE key_hash = ? AND seq > ? ORDER BY seq LIMIT ?')
      .pluck()
      .all(keyHash, seq, limit) as string[];
  }

  /** Drops events past the 7-day retention (their finished deliveries go with them). */
  prune(): number {
    return this.db.prepare('DELETE FROM events WHERE created_at < ?').run(this.clock.now() - retentionMs).changes;
  }
}

/** Stable per hook and event, so every retry of one event to one hook carries the same id. */
export function webhookId(hookId: string, eventId: string): string {
  return `msg_${hookId.replace(/^hook_/, '')}_${eventId.replace(/^evt_/, '')}`;
}

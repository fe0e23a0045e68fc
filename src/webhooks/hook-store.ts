import { randomBytes } from 'node:crypto';
import type { Db } from '../db/database.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { AppError } from '../errors.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import type { EventType } from '../triggers/transitions.js';
import { generateSecret } from './signing.js';

export interface HookInput {
  target_url: string;
  events: EventType[];
  /** Lower-case device ids, or null for every device. */
  device_ids: string[] | null;
}

export interface Hook {
  id: string;
  target_url: string;
  events: EventType[];
  device_ids: string[] | null;
  status: 'active' | 'paused' | 'disabled';
  status_reason: string | null;
  created_at: string;
}

interface HookRow {
  id: string;
  target_url: string;
  events: string;
  device_ids: string | null;
  secret_cipher: string;
  status: Hook['status'];
  status_reason: string | null;
  created_at: string;
}

const columns = 'id, target_url, events, device_ids, secret_cipher, status, status_reason, created_at';

function toHook(row: HookRow): Hook {
  return {
    id: row.id,
    target_url: row.target_url,
    events: JSON.parse(row.events) as EventType[],
    device_ids: row.device_ids === null ? null : (JSON.parse(row.device_ids) as string[]),
    status: row.status,
    status_reason: row.status_reason,
    created_at: row.created_at,
  };
}

/** REST-hook subscriptions per key (CONTRACT 6.4). Signing secrets are stored sealed. */
export class HookStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /**
   * Subscribes, idempotently: the same key + URL + events + device ids returns the existing
   * (not disabled) hook, secret included, with `created: false`.
   */
  create(keyHash: string, input: HookInput): { hook: Hook & { secret: string }; created: boolean } {
    const events = JSON.stringify([...new Set(input.events)].sort());
    const devices = input.device_ids === null ? null : JSON.stringify([...new Set(input.device_ids)].sort());
    return this.db.transaction(() => {
      const existing = this.db
        .prepare(`SELECT ${columns} FROM hooks WHERE key_hash = ? AND target_url = ? AND events = ? AND device_ids IS ? AND status != 'disabled'`)
        .get(keyHash, input.target_url, events, devices) as HookRow | undefined;
      if (existing) return { hook: { ...toHook(existing), secret: this.box.open(existing.secret_cipher) }, created: false };
      const secret = generateSecret();
      const row: HookRow = {
        id: `hook_${randomBytes(12).toString('hex')}`,
        target_url: input.target_url,
        events,
        device_ids: devices,
        secret_cipher: this.box.seal(secret),
        status: 'active',
        status_reason: null,
        created_at: formatMicros(this.clock.now() * 1000),
      };
      this.db
        .prepare(`INSERT INTO hooks (key_hash, ${columns}) VALUES (@key_hash, @id, @target_url, @events, @device_ids, @secret_cipher, @status, @status_reason, @created_at)`)
        .run({ ...row, key_hash: keyHash });
      return { hook: { ...toHook(row), secret }, created: true };
    })();
  }

  list(keyHash: string): Hook[] {
    return (this.db.prepare(`SELECT ${columns} FROM hooks WHERE key_hash = ? ORDER BY created_at, id`).all(keyHash) as HookRow[]).map(toHook);
  }

  /** A hook of another key is as absent as one that never existed. */
  get(keyHash: string, id: string): Hook {
    const row = this.db.prepare(`SELECT ${columns} FROM hooks WHERE key_hash = ? AND id = ?`).get(keyHash, id) as HookRow | undefined;
    if (!row) throw new AppError('not_found', 'Hook not found');
    return toHook(row);
  }

  /** Unsubscribes; queued deliveries of the hook go with it. */
  delete(keyHash: string, id: string): void {
    const { changes } = this.db.prepare('DELETE FROM hooks WHERE key_hash = ? AND id = ?').run(keyHash, id);
    if (changes === 0) throw new AppError('not_found', 'Hook not found');
  }

  /** The latest 100 delivery attempts of a hook, newest first. */
  attempts(keyHash: string, id: string): unknown[] {
    this.get(keyHash, id);
    const rows = this.db
      .prepare(`SELECT a.event_id, a.webhook_id, a.attempt, a.status_code, a.error, a.duration_ms, a.attempted_at,
          a.next_attempt_at, a.outcome, d.status AS delivery_status
        FROM delivery_attempts a JOIN deliveries d ON d.id = a.delivery_id
        WHERE a.hook_id = ? ORDER BY a.id DESC LIMIT 100`)
      .all(id) as Array<Record<string, unknown>>;
    return rows;
  }
}

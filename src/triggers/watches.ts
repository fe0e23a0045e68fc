import type { Db } from '../db/database.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Principal } from '../sources/types.js';
import type { Clock } from '../time/timestamps.js';

export interface Watch {
  key_hash: string;
  user_id: string | null;
  key_cipher: string | null;
  baseline_at: number | null;
  paused_reason: string | null;
}

const dayMs = 86_400_000;

/**
 * Keys whose devices the poller watches (CONTRACT 6.3): a key is watched while it has an
 * active hook or called the polling trigger in the last 24 hours. Embedded mode remembers
 * the key's user; upstream mode must re-send the key, so it is kept sealed (AES-256-GCM).
 */
export class WatchStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** Creates or refreshes the watch of a key, resuming it if it was paused. */
  enrol(principal: Principal, viaTrigger: boolean): { watch: Watch; created: boolean } {
    const now = this.clock.now();
    return this.db.transaction(() => {
      const existing = this.get(principal.keyHash);
      const cipher = principal.scopes === null ? this.box.seal(principal.key) : null;
      if (!existing) {
        this.db
          .prepare(`INSERT INTO watches (key_hash, user_id, key_cipher, last_trigger_at, created_at) VALUES (?, ?, ?, ?, ?)`)
          .run(principal.keyHash, principal.userId, cipher, viaTrigger ? now : null, now);
      } else {
        this.db
          .prepare(`UPDATE watches SET user_id = ?, key_cipher = coalesce(?, key_cipher),
            last_trigger_at = CASE WHEN ? THEN ? ELSE last_trigger_at END WHERE key_hash = ?`)
          .run(principal.userId, cipher, viaTrigger ? 1 : 0, now, principal.keyHash);
        if (existing.paused_reason !== null) this.resume(principal.keyHash);
      }
      return { watch: this.get(principal.keyHash)!, created: !existing };
    })();
  }

  get(keyHash: string): Watch | undefined {
    return this.db
      .prepare('SELECT key_hash, user_id, key_cipher, baseline_at, paused_reason FROM watches WHERE key_hash = ?')
      .get(keyHash) as Watch | undefined;
  }

  remove(keyHash: string): void {
    this.db.prepare('DELETE FROM watches WHERE key_hash = ?').run(keyHash);
  }

  /** Watches to poll now: not paused, with an active hook or a trigger call in the last day. */
  due(): Watch[] {
    return this.db
      .prepare(`SELECT key_hash, user_id, key_cipher, baseline_at, paused_reason FROM watches w
        WHERE paused_reason IS NULL AND (last_trigger_at > ?
          OR EXISTS (SELECT 1 FROM hooks h WHERE h.key_hash = w.key_hash AND h.status = 'active'))`)
      .all(this.clock.now() - dayMs) as Watch[];
  }

  /** The upstream key of a watch, unsealed for one poll. */
  key(watch: Watch): string {
    return watch.key_cipher ? this.box.open(watch.key_cipher) : '';
  }

  /** Stops watching a key until it is used successfully again; its active hooks show why. */
  pause(keyHash: string, reason: string): void {
    this.db.transaction(() => {
      this.db.prepare('UPDATE watches SET paused_reason = ? WHERE key_hash = ?').run(reason, keyHash);
      this.db.prepare(`UPDATE hooks SET status = 'paused', status_reason = ? WHERE key_hash = ? AND status = 'active'`).run(reason, keyHash);
    })();
  }

  resume(keyHash: string): void {
    this.db.transaction(() => {
      this.db.prepare('UPDATE watches SET paused_reason = NULL WHERE key_hash = ?').run(keyHash);
      this.db.prepare(`UPDATE hooks SET status = 'active', status_reason = NULL WHERE key_hash = ? AND status = 'paused'`).run(keyHash);
    })();
  }
}

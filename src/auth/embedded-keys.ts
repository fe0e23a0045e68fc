import { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.js';
import type { Clock } from '../time/timestamps.js';
import { AppError } from '../errors.js';
import type { Principal } from '../sources/types.js';
import { hashKey, sameHash } from './keys.js';

/** Resolves a key to who holds it; throws 401 `Invalid API key`. */
export type KeyVerifier = (key: string) => Promise<Principal>;

interface KeyRow {
  key_id: string;
  key_name: string;
  key_sha256: string;
  scopes: string;
  user_id: string;
  account_id: string;
  account_name: string;
}

/** How long a verified key is trusted without a new look-up (a revocation shows within this). */
export const verifiedKeyTtlMs = 5000;

/**
 * Embedded mode: keys are looked up by their SHA-256 hash only. Successful look-ups are
 * remembered by hash for `verifiedKeyTtlMs` (bounded LRU, the plain key is never a cache key
 * or value), so a warm dropdown does not pay a three-table join per request; failures are
 * never remembered, so every bad attempt is looked up and counted.
 */
export function embeddedKeyVerifier(db: Db, clock: Clock): KeyVerifier {
  const byHash = db.prepare(`SELECT k.id AS key_id, k.name AS key_name, k.key_sha256, k.scopes, u.id AS user_id,
      a.id AS account_id, a.name AS account_name
    FROM api_keys k JOIN users u ON u.id = k.user_id JOIN accounts a ON a.id = u.account_id
    WHERE k.key_sha256 = ?`);
  const verified = new LRUCache<string, { until: number; principal: Omit<Principal, 'key'> }>({ max: 10_000 });
  return async (key) => {
    const keyHash = hashKey(key);
    const now = clock.now();
    const hit = verified.get(keyHash);
    if (hit && hit.until > now) return { ...hit.principal, key };
    const row = byHash.get(keyHash) as KeyRow | undefined;
    if (!row || !sameHash(row.key_sha256, keyHash)) {
      verified.delete(keyHash);
      throw new AppError('invalid_key', 'Invalid API key');
    }
    const principal = {
      keyHash,
      scopes: new Set(JSON.parse(row.scopes) as string[]),
      keyId: row.key_id,
      keyName: row.key_name,
      userId: row.user_id,
      accountId: row.account_id,
      accountName: row.account_name,
    };
    verified.set(keyHash, { until: now + verifiedKeyTtlMs, principal });
    return { ...principal, key };
  };
}

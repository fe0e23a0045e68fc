import { LRUCache } from 'lru-cache';
import type { Db } from '../db/database.js';
import type { Clock } from '../time/timestamps.js';
import { AppError } from '../errors.js';
import type { Principal } from '../sources/types.js';
import { hashKey, sameHash } from './keys.js';

/**
 * Resolves a key (its SHA-256 hash may be passed along) to who holds it; throws 401
 * `Invalid API key`. `isKnownGood(keyHash)`: the key was verified good recently, so using it
 * is no guess (it then does not count as an attempt before its look-up; a look-up that
 * refuses it counts one after).
 */
export type KeyVerifier = ((key: string, keyHash?: string) => Promise<Principal>) & { isKnownGood?: (keyHash: string) => boolean };

export interface KeyRecord {
  key_id: string;
  key_name: string;
  key_sha256: string;
  scopes: string[];
  user_id: string;
  account_id: string;
  account_name: string;
}

/** The catalog's record of a key by its SHA-256 hash, with its user and account. */
export async function keyByHash(db: Db, keyHash: string): Promise<KeyRecord | undefined> {
  const row = await db.kysely
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .innerJoin('accounts as a', 'a.id', 'u.account_id')
    .select(['k.id as key_id', 'k.name as key_name', 'k.key_sha256', 'k.scopes', 'u.id as user_id', 'a.id as account_id', 'a.name as account_name'])
    .where('k.key_sha256', '=', keyHash)
    .executeTakeFirst();
  return row && { ...row, scopes: JSON.parse(row.scopes) as string[] };
}

/** How long a verified key is trusted without a new look-up (a revocation shows within this). */
export const verifiedKeyTtlMs = 5000;

/**
 * How long a key once verified is known to be no guess: its next look-ups (one every
 * `verifiedKeyTtlMs`) count no failed attempt before they run, so a busy key costs no write
 * per look-up (docs/api.md). A look-up that finds it revoked is counted then.
 */
export const knownKeyTtlMs = 10 * 60_000;

/**
 * Embedded mode: keys are looked up by their SHA-256 hash only. Successful look-ups are
 * remembered by hash (bounded LRU, the plain key is never a cache key or value): for
 * `verifiedKeyTtlMs` without a new look-up, so a warm dropdown does not pay a three-table join
 * per request, and for `knownKeyTtlMs` as no guess (`isKnownGood`). Failures are never
 * remembered, so every bad attempt is looked up and counted.
 */
export function embeddedKeyVerifier(db: Db, clock: Clock): KeyVerifier {
  const verified = new LRUCache<string, { until: number; knownUntil: number; principal: Omit<Principal, 'key'> }>({ max: 10_000 });
  const verify: KeyVerifier = async (key, keyHash = hashKey(key)) => {
    const now = clock.now();
    const hit = verified.get(keyHash);
    if (hit && hit.until > now) return { ...hit.principal, key };
    const row = await keyByHash(db, keyHash);
    if (!row || !sameHash(row.key_sha256, keyHash)) {
      verified.delete(keyHash);
      throw new AppError('invalid_key', 'Invalid API key');
    }
    const principal = {
      keyHash,
      scopes: new Set(row.scopes),
      keyId: row.key_id,
      keyName: row.key_name,
      userId: row.user_id,
      accountId: row.account_id,
      accountName: row.account_name,
    };
    verified.set(keyHash, { until: now + verifiedKeyTtlMs, knownUntil: now + knownKeyTtlMs, principal });
    return { ...principal, key };
  };
  verify.isKnownGood = (keyHash) => (verified.get(keyHash)?.knownUntil ?? 0) > clock.now();
  return verify;
}

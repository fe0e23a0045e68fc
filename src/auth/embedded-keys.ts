import { boundedLru } from '../cache/bounded-lru.js';
import type { Db } from '../db/database.js';
import { parseIso, type Clock } from '../time/timestamps.js';
import { AppError } from '../errors.js';
import type { Principal } from './principal.js';
import { hashKey, sameHash } from './keys.js';
import type { RequestWaits } from '../db/wait-budget.js';

/**
 * Resolves a key (its SHA-256 hash may be passed along) to who holds it; throws 401
 * `Invalid API key`. `isKnownGood(keyHash)`: the key was verified good recently, so using it
 * is no guess (it then does not count as an attempt before its look-up; a look-up that
 * refuses it counts one after). `waits`: the request's, for its look-up (db/wait-budget.ts).
 */
export type KeyVerifier = ((key: string, keyHash?: string, waits?: RequestWaits) => Promise<Principal>) & {
  isKnownGood?: (keyHash: string) => boolean;
  /** Embedded mode: drops what this replica remembers of a key (by id), so a change to it applies at once here. */
  forget?: (keyId: string) => void;
  /**
   * Embedded mode: what `verify` would answer without a look-up (but the key itself, which the
   * caller adds), for a key verified within the last `verifiedKeyTtlMs` and not expired;
   * undefined when `verify` must be asked.
   */
  cached?: (keyHash: string) => Omit<Principal, 'key'> | undefined;
};

export interface KeyRecord {
  key_id: string;
  key_name: string;
  key_sha256: string;
  scopes: string[];
  user_id: string;
  account_id: string;
  account_name: string;
  expires_at: string | null;
  revoked_at: string | null;
  rate_limit_per_minute: number | null;
}

/** The catalog's record of a key by its SHA-256 hash, with its user and account. */
export async function keyByHash(db: Db, keyHash: string): Promise<KeyRecord | undefined> {
  const row = await db.kysely
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .innerJoin('accounts as a', 'a.id', 'u.account_id')
    .select([
      'k.id as key_id',
      'k.name as key_name',
      'k.key_sha256',
      'k.scopes',
      'u.id as user_id',
      'a.id as account_id',
      'a.name as account_name',
      'k.expires_at',
      'k.revoked_at',
      'k.rate_limit_per_minute',
    ])
    .where('k.key_sha256', '=', keyHash)
    .executeTakeFirst();
  return (
    row && {
      ...row,
      scopes: JSON.parse(row.scopes) as string[],
      rate_limit_per_minute: row.rate_limit_per_minute === null ? null : Number(row.rate_limit_per_minute),
    }
  );
}

/**
 * How long a verified key is trusted without a new look-up: a key revoked (or changed) on any
 * replica is refused by every other within this (docs/keys.md). An expiry needs no look-up: it
 * is checked against the clock on every request.
 */
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
  type Known = { until: number; knownUntil: number; expiresAtMs: number; principal: Omit<Principal, 'key'> };
  const verified = boundedLru<string, Known>(10_000);
  const usable = (hit: Known, key: string, now: number): Principal => {
    if (hit.expiresAtMs <= now) throw new AppError('expired_key', 'API key expired');
    return { ...hit.principal, key };
  };
  const verify: KeyVerifier = async (key, keyHash = hashKey(key), waits) => {
    const now = clock.now();
    const hit = verified.get(keyHash);
    if (hit && hit.until > now) return usable(hit, key, now);
    const row = await keyByHash(db.within(waits), keyHash);
    if (!row || !sameHash(row.key_sha256, keyHash)) {
      verified.delete(keyHash);
      throw new AppError('invalid_key', 'Invalid API key');
    }
    if (row.revoked_at !== null) {
      // Still a key the catalog knows (no guess), but never again a good one.
      verified.delete(keyHash);
      throw new AppError('revoked_key', 'API key revoked');
    }
    const principal = {
      keyHash,
      scopes: new Set(row.scopes),
      keyId: row.key_id,
      keyName: row.key_name,
      userId: row.user_id,
      accountId: row.account_id,
      accountName: row.account_name,
      rateLimitPerMinute: row.rate_limit_per_minute,
    };
    const expiresAtMs = row.expires_at === null ? Number.POSITIVE_INFINITY : (parseIso(row.expires_at) ?? 0) / 1000;
    const known = { until: now + verifiedKeyTtlMs, knownUntil: now + knownKeyTtlMs, expiresAtMs, principal };
    verified.set(keyHash, known);
    return usable(known, key, now);
  };
  verify.cached = (keyHash) => {
    const now = clock.now();
    const hit = verified.get(keyHash);
    return hit && hit.until > now && hit.expiresAtMs > now ? hit.principal : undefined;
  };
  verify.isKnownGood = (keyHash) => (verified.get(keyHash)?.knownUntil ?? 0) > clock.now();
  verify.forget = (keyId) => {
    for (const [keyHash, known] of verified.entries()) if (known.principal.keyId === keyId) verified.delete(keyHash);
  };
  return verify;
}

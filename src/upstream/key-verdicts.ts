import { boundedLru } from '../cache/bounded-lru.js';
import { AppError } from '../errors.js';
import { hashKey } from '../auth/keys.js';
import type { KeyVerifier } from '../auth/embedded-keys.js';
import type { Clock } from '../time/timestamps.js';

/**
 * Keys an upstream rejected with 401, remembered by hash for `ttlMs` (docs/api.md), so a bad
 * key is answered locally instead of being re-sent upstream; and keys it accepted, for as
 * long, so using them again is not counted as a guess.
 */
export class KeyVerdicts {
  private readonly rejected = boundedLru<string, { until: number; message: string }>(100_000);
  private readonly accepted = boundedLru<string, number>(100_000);

  constructor(
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  reject(keyHash: string, message: string): void {
    if (this.ttlMs > 0) this.rejected.set(keyHash, { until: this.clock.now() + this.ttlMs, message });
  }

  /** The upstream's message if the key was rejected within the TTL. */
  rejection(keyHash: string): string | undefined {
    const verdict = this.rejected.get(keyHash);
    if (!verdict) return undefined;
    if (verdict.until <= this.clock.now()) {
      this.rejected.delete(keyHash);
      return undefined;
    }
    return verdict.message;
  }

  /** Whether the upstream accepted the key within the TTL. */
  isAccepted(keyHash: string): boolean {
    return (this.accepted.get(keyHash) ?? 0) > this.clock.now();
  }

  /** Runs an upstream call, remembering whether the upstream accepted or rejected the key. */
  async watch<T>(keyHash: string, call: () => Promise<T>): Promise<T> {
    try {
      const result = await call();
      if (this.ttlMs > 0) this.accepted.set(keyHash, this.clock.now() + this.ttlMs);
      return result;
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_scopes' && this.ttlMs > 0) this.accepted.set(keyHash, this.clock.now() + this.ttlMs);
      if (err instanceof AppError && err.code === 'invalid_key') {
        this.accepted.delete(keyHash);
        this.reject(keyHash, err.message);
      }
      throw err;
    }
  }
}

/** Upstream mode: the upstream decides; locally only the remembered rejections apply. */
export function upstreamKeyVerifier(verdicts: KeyVerdicts): KeyVerifier {
  const verify: KeyVerifier = async (key, keyHash = hashKey(key)) => {
    const rejected = verdicts.rejection(keyHash);
    if (rejected !== undefined) throw new AppError('invalid_key', rejected);
    return { keyHash, key, scopes: null, keyId: null, keyName: null, userId: null, accountId: null, accountName: null };
  };
  verify.isKnownGood = (keyHash) => verdicts.isAccepted(keyHash);
  return verify;
}

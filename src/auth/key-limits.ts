import type { Response } from 'express';
import { AppError } from '../errors.js';
import type { Principal } from './principal.js';
import type { KeyUsage } from './key-usage.js';
import type { RateLimitAnswer, RateLimiter } from './rate-limiter.js';

/**
 * What happens to every request with a valid key once it is known (docs/keys.md): its use is
 * noted (embedded keys, for `last_used_at`), its token taken from the per-key rate limit, and
 * the answer given `RateLimit-Policy` and `RateLimit`; over the limit, a 429
 * `Rate limit exceeded` with `Retry-After`. The limit is the key's own, else
 * `RATE_LIMIT_PER_MINUTE`; 0 turns it off (no headers then).
 */
export type KeyLimits = (principal: Principal, res: Response) => void | Promise<void>;

export function keyLimits(limiter: RateLimiter, defaultLimit: number, usage: KeyUsage | null): KeyLimits {
  const apply = (res: Response, answer: RateLimitAnswer): void => {
    res.setHeader('RateLimit-Policy', answer.policy);
    res.setHeader('RateLimit', answer.state);
    if (!answer.allowed) throw new AppError('rate_limited', 'Rate limit exceeded', undefined, { 'Retry-After': String(answer.retryAfterSeconds) });
  };
  return (principal, res) => {
    if (usage && principal.keyId) usage.used(principal.keyId);
    const limit = principal.rateLimitPerMinute ?? defaultLimit;
    if (limit <= 0) return;
    const answer = limiter.take(principal.keyHash, limit);
    if (answer instanceof Promise) return answer.then((settled) => apply(res, settled));
    apply(res, answer);
  };
}

import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { AppError } from '../errors.js';
import { bearerToken } from './authenticate.js';
import { clientAddress } from './client-address.js';
import type { FailedAttempts } from './failed-attempts.js';
import { waitsOf } from '../db/wait-budget.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * The operator API's guard (docs/keys.md): `Authorization: Bearer <ADMIN_TOKEN>`, compared in
 * constant time (digests of equal length). A wrong or missing token is a 401 counted by the
 * failed-attempt limit, like a wrong key; a client over that limit gets 429 first. Without
 * `ADMIN_TOKEN` the operator API does not exist: every path of it answers 404 `Not found`.
 */
export function adminToken(token: string | undefined, attempts: FailedAttempts): RequestHandler {
  const expected = token === undefined ? null : digest(token);
  const challenge = { 'WWW-Authenticate': 'Bearer' };
  return async (req, res, next) => {
    if (expected === null) throw new AppError('not_found', 'Not found');
    // The same client address as the failed-attempt limit of keys (TRUST_PROXY).
    const client = clientAddress(req);
    const tooMany = (seconds: number) => new AppError('rate_limited', 'Too many requests', undefined, { 'Retry-After': String(seconds) });
    const wait = attempts.retryAfterSeconds(client);
    if (wait > 0) throw tooMany(wait);
    const presented = bearerToken(req);
    const given = presented === undefined ? null : digest(presented);
    if (given !== null && timingSafeEqual(given, expected)) {
      next();
      return;
    }
    // Counted under the digest of what was sent (never the token itself).
    const begun = await attempts.begin(client, given === null ? 'admin:missing' : `admin:${given.toString('hex')}`, waitsOf(res));
    if ('retryAfterSeconds' in begun) throw tooMany(begun.retryAfterSeconds);
    begun.failed();
    throw given === null
      ? new AppError(
          'missing_key',
          'Missing admin token',
          [{ path: 'Authorization', message: 'The operator API reads "Authorization: Bearer <ADMIN_TOKEN>"' }],
          challenge,
        )
      : new AppError('invalid_key', 'Invalid admin token', undefined, challenge);
  };
}

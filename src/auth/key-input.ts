import { z } from 'zod';
import { AppError } from '../errors.js';
import { normalizeTimestamp, parseTimestamp } from '../time/timestamps.js';

/**
 * What an operator may set on a key (docs/keys.md), checked the same way for the operator API
 * and `npm run keys`. Times are ISO 8601 with a zone, or relative to now (`now+30d`).
 */
export const scopeName = z.enum(['device:read', 'menu:read', 'hooks:write'], { error: 'scopes must list device:read, menu:read and/or hooks:write' });

export const keyFields = {
  name: z.string({ error: 'name must be a string' }).trim().min(1, 'name must not be empty').max(200, 'name must be at most 200 characters'),
  scopes: z
    .array(scopeName, { error: 'scopes must be an array of scopes' })
    .max(3, 'scopes must list at most 3 scopes')
    .refine((scopes) => new Set(scopes).size === scopes.length, 'scopes must not repeat a scope')
    .meta({ uniqueItems: true }),
  expires_at: z
    .string({ error: 'expires_at must be a timestamp or null' })
    .refine((text) => parseTimestamp(text, 0) !== null, 'expires_at must be an ISO 8601 timestamp with a zone, or now+30d and the like')
    .nullable()
    .describe('When the key stops working: ISO 8601 with a zone, or relative (`now+30d`); null = never. Must be in the future.'),
  rate_limit_per_minute: z
    .number({ error: 'rate_limit_per_minute must be an integer or null' })
    .int('rate_limit_per_minute must be an integer')
    .min(1, 'rate_limit_per_minute must be at least 1')
    .max(10_000_000, 'rate_limit_per_minute must be at most 10000000')
    .nullable()
    .describe('The key\u2019s own limit of requests a minute; null = `RATE_LIMIT_PER_MINUTE`.'),
};

/** The longest grace a roll gives the old key: 30 days. */
export const maxGraceSeconds = 30 * 86_400;

export const graceSeconds = z
  .number({ error: 'grace_seconds must be an integer' })
  .int('grace_seconds must be an integer')
  .min(0, `grace_seconds must be from 0 to ${maxGraceSeconds}`)
  .max(maxGraceSeconds, `grace_seconds must be from 0 to ${maxGraceSeconds}`)
  .describe('How long the old key keeps working, in seconds (0 = it stops now; at most 30 days).');

/** An expiry as stored (six fractional digits); a time not in the future is a 400. */
export function expiryOf(text: string | null | undefined, nowMs: number): string | null | undefined {
  if (text === undefined || text === null) return text;
  const normalized = normalizeTimestamp(text, nowMs)!;
  if (parseTimestamp(normalized, nowMs)! <= nowMs * 1000) {
    throw new AppError('validation', 'expires_at must be in the future', [{ path: 'expires_at', message: 'must be in the future' }]);
  }
  return normalized;
}

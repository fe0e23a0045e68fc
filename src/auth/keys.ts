import crypto, { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** docs/api.md: 16–256 printable ASCII characters, no spaces. Checked before any look-up. */
const keyPattern = /^[\x21-\x7E]{16,256}$/;

export function isWellFormedKey(key: unknown): key is string {
  return typeof key === 'string' && keyPattern.test(key);
}

// Node.js ≥ 20.12 hashes a short input in one call, without a Hash object (every request hashes its key).
const oneShot = typeof crypto.hash === 'function' ? crypto.hash : undefined;

/** SHA-256 hex of the key: the only form in which embedded mode stores a key. */
export function hashKey(key: string): string {
  return oneShot ? oneShot('sha256', key, 'hex') : createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Constant-time comparison of two hex digests of equal length. */
export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A new random key: `sk_live_` + 32 base64url characters (192 bits). */
export function generateKey(): string {
  return `sk_live_${randomBytes(24).toString('base64url')}`;
}

/** The first 8 characters of a key: stored beside its hash so an operator can recognise it. */
export function keyPrefix(key: string): string {
  return key.slice(0, 8);
}

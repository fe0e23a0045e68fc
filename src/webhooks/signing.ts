import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the signed content is
 * `{webhook-id}.{webhook-timestamp}.{body}`, HMAC-SHA256 with the secret's bytes (the base64
 * after `whsec_`), sent as `webhook-signature: v1,<base64>`.
 */
export function generateSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export function signedHeaders(secret: string, id: string, timestampSeconds: number, body: string): SignedHeaders {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': sign(secret, id, timestampSeconds, body),
  };
}

/**
 * The headers of a delivery while a rotated-away secret still signs: the new signature first,
 * the old one second, space-separated, as the specification provides for rotation (a receiver
 * accepts the delivery when any one matches). `previous` null: one signature.
 */
export function rotatedHeaders(secret: string, previous: string | null, id: string, timestampSeconds: number, body: string): SignedHeaders {
  const headers = signedHeaders(secret, id, timestampSeconds, body);
  if (previous !== null) headers['webhook-signature'] += ` ${sign(previous, id, timestampSeconds, body)}`;
  return headers;
}

/**
 * Verifies a delivery as a receiver would: any `v1,` signature in the space-separated list
 * must match, and the timestamp must be within `toleranceSeconds` of `nowSeconds`.
 */
export function verify(secret: string, headers: SignedHeaders, body: string, nowSeconds: number, toleranceSeconds = 300): boolean {
  const timestamp = Number(headers['webhook-timestamp']);
  if (!Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(secret, headers['webhook-id'], timestamp, body));
  return headers['webhook-signature'].split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

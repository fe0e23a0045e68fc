import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Standard Webhooks verification: `webhook-signature` carries one or more space-separated
 * `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">`, keyed with the
 * bytes of the hook's secret (`whsec_<base64>`).
 */

/**
 * How far a delivery's timestamp may be from now. Ahead: 5 minutes (the Standard Webhooks
 * default). Behind: an hour, because Activepieces queues a received webhook and runs the
 * trigger when a worker is free; a delivery refused for its age would be lost, as the
 * connector already had its 2xx.
 */
export const futureToleranceSeconds = 5 * 60;
export const pastToleranceSeconds = 60 * 60;

export function sign(secret: string, id: string, timestamp: string, body: string): string {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** A header whatever its case. */
export function header(headers: Record<string, unknown> | undefined, name: string): string | undefined {
  const found = Object.keys(headers ?? {}).find((key) => key.toLowerCase() === name);
  const value = found === undefined ? undefined : headers?.[found];
  return Array.isArray(value) ? String(value[0]) : value === undefined || value === null ? undefined : String(value);
}

/** Null when the delivery is signed with the secret and recent, else why not. */
export function signatureProblem(secret: string, headers: Record<string, unknown> | undefined, body: string, now = Date.now()): string | null {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signature = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signature) return 'the webhook signature headers are missing';
  const seconds = Number(timestamp);
  const age = now / 1000 - seconds;
  if (!Number.isFinite(seconds) || age > pastToleranceSeconds || -age > futureToleranceSeconds) return 'the webhook timestamp is too old or in the future';
  const expected = Buffer.from(sign(secret, id, timestamp, body));
  const ok = signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return ok ? null : 'the signature does not match';
}

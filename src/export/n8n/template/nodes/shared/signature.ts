import { createHmac, timingSafeEqual } from 'crypto';

/** Deliveries older or newer than this (seconds) are refused, as Standard Webhooks advises. */
export const toleranceSeconds = 5 * 60;

function header(headers: Record<string, unknown>, name: string): string {
	const value = headers[name];
	return Array.isArray(value) ? String(value[0] ?? '') : String(value ?? '');
}

/**
 * Whether a delivery carries a valid Standard Webhooks signature for `secret` (`whsec_` and
 * the base64 key): `webhook-signature` holds `v1,<base64 HMAC-SHA256 of
 * "{webhook-id}.{webhook-timestamp}.{body}">` (several, space-separated, during a secret
 * rotation), and the timestamp is within the tolerance of now.
 */
export function verifySignature(
	secret: string,
	headers: Record<string, unknown>,
	rawBody: string,
	nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
	const id = header(headers, 'webhook-id');
	const timestamp = header(headers, 'webhook-timestamp');
	const signatures = header(headers, 'webhook-signature');
	if (!secret || !id || !/^\d+$/.test(timestamp) || !signatures) return false;
	if (Math.abs(nowSeconds - Number(timestamp)) > toleranceSeconds) return false;
	const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
	const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
	return signatures.split(' ').some((entry) => {
		const [version, signature] = entry.split(',');
		if (version !== 'v1' || !signature) return false;
		const given = Buffer.from(signature, 'base64');
		return given.length === expected.length && timingSafeEqual(given, expected);
	});
}

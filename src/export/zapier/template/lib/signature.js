'use strict';

/**
 * Standard Webhooks verification of a connector delivery: `webhook-signature` carries
 * `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">` keyed with the
 * bytes of the hook's secret (`whsec_<base64>`), possibly several, space-separated.
 */

const crypto = require('crypto');

/**
 * A header of Zapier's raw request, whatever its case. Zapier hands headers over renamed
 * `Http-Webhook-Signature` style; the plain name is accepted too.
 * @param {Record<string, string> | undefined} headers
 * @param {string} name
 * @returns {string | undefined}
 */
const rawHeader = (headers, name) => {
  const wanted = [name, `http-${name}`];
  const found = Object.keys(headers || {}).find((key) => wanted.includes(key.toLowerCase()));
  return found === undefined || !headers ? undefined : String(headers[found]);
};

/**
 * The signature a delivery must carry.
 * @param {string} secret `whsec_…` as the connector returned it
 * @param {string} id
 * @param {string} timestamp
 * @param {string} body
 */
const sign = (secret, id, timestamp, body) => {
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
  return `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
};

/**
 * Null when the raw request is signed with the secret, else why not.
 * @param {string} secret
 * @param {{headers?: Record<string, string>, content?: string}} rawRequest
 * @returns {string | null}
 */
const signatureProblem = (secret, rawRequest) => {
  const id = rawHeader(rawRequest.headers, 'webhook-id');
  const timestamp = rawHeader(rawRequest.headers, 'webhook-timestamp');
  const signature = rawHeader(rawRequest.headers, 'webhook-signature');
  if (!id || !timestamp || !signature) return 'the webhook signature headers are missing';
  if (typeof rawRequest.content !== 'string') return 'the raw body is missing';
  const expected = Buffer.from(sign(secret, id, timestamp, rawRequest.content));
  const ok = signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
  return ok ? null : 'the signature does not match';
};

module.exports = { sign, signatureProblem };

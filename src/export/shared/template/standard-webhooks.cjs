// Generated from standard-webhooks.ts by `npm run export:shared`; do not edit.
// @ts-nocheck
"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.queuedTolerance = exports.defaultTolerance = void 0;
exports.header = header;
exports.sign = sign;
exports.signatureProblem = signatureProblem;
/**
 * Standard Webhooks verification of a connector delivery, written once for every exported app
 * (src/export/shared/template/standard-webhooks.ts in the connector's repository; the apps
 * written in JavaScript get it compiled by `npm run export:shared`). `webhook-signature`
 * carries one or more space-separated `v1,<base64 HMAC-SHA256 of
 * "{webhook-id}.{webhook-timestamp}.{raw body}">` (several during a secret rotation), keyed
 * with the bytes of the hook's secret (`whsec_<base64>`); the timestamp must be within the
 * tolerance of now, so an old delivery cannot be replayed.
 */
const crypto_1 = require("crypto");
/** The Standard Webhooks default: five minutes either way. */
exports.defaultTolerance = { pastSeconds: 5 * 60, futureSeconds: 5 * 60 };
/**
 * For a platform that queues a received webhook and runs the trigger when a worker is free
 * (Activepieces): an hour behind, five minutes ahead. A delivery refused for its age would be
 * lost, as the connector already had its 2xx.
 */
exports.queuedTolerance = { pastSeconds: 60 * 60, futureSeconds: 5 * 60 };
/**
 * A header whatever its case; also under an `http-` prefix, as some platforms hand request
 * headers over (`Http-Webhook-Signature`).
 */
function header(headers, name) {
    const wanted = [name, `http-${name}`];
    const found = Object.keys(headers ?? {}).find((key) => wanted.includes(key.toLowerCase()));
    const value = found === undefined ? undefined : headers?.[found];
    if (Array.isArray(value))
        return value.length === 0 ? undefined : String(value[0]);
    return value === undefined || value === null ? undefined : String(value);
}
/** The signature a delivery must carry. */
function sign(secret, id, timestamp, body) {
    const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
    return `v1,${(0, crypto_1.createHmac)('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}
/**
 * Null when the delivery (its headers and raw body) is signed with the secret and recent, else
 * why not. `nowSeconds` is for tests.
 */
function signatureProblem(secret, headers, body, tolerance = exports.defaultTolerance, nowSeconds = Math.floor(Date.now() / 1000)) {
    const id = header(headers, 'webhook-id');
    const timestamp = header(headers, 'webhook-timestamp');
    const signature = header(headers, 'webhook-signature');
    if (!id || !timestamp || !signature)
        return 'the webhook signature headers are missing';
    if (typeof body !== 'string')
        return 'the raw body is missing';
    if (!secret)
        return 'the hook has no secret';
    const age = nowSeconds - Number(timestamp);
    if (!/^\d+$/.test(timestamp) || age > tolerance.pastSeconds || -age > tolerance.futureSeconds) {
        return 'the webhook timestamp is too old or in the future';
    }
    const expected = Buffer.from(sign(secret, id, timestamp, body));
    const matches = signature.split(' ').some((candidate) => {
        const given = Buffer.from(candidate);
        return given.length === expected.length && (0, crypto_1.timingSafeEqual)(given, expected);
    });
    return matches ? null : 'the signature does not match';
}

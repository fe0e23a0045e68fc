import crypto from "crypto";

/**
 * Standard Webhooks verification of a connector delivery: `webhook-signature` carries
 * `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{raw body}">` keyed with the
 * bytes of the hook's secret (`whsec_<base64>`), possibly several, space-separated; the
 * timestamp must be within five minutes of now, so an old delivery cannot be replayed.
 */

const TOLERANCE_SECONDS = 5 * 60;

/** A header of Pipedream's HTTP event, whatever its case. */
function header(headers, name) {
  const found = Object.keys(headers ?? {}).find((key) => key.toLowerCase() === name);
  return found === undefined
    ? undefined
    : String(headers[found]);
}

/** The signature a delivery must carry. */
export function sign(secret, id, timestamp, body) {
  const key = Buffer.from(secret.startsWith("whsec_")
    ? secret.slice(6)
    : secret, "base64");
  const mac = crypto.createHmac("sha256", key).update(`${id}.${timestamp}.${body}`)
    .digest("base64");
  return `v1,${mac}`;
}

/**
 * Null when the HTTP event (`{headers, bodyRaw}`) is signed with the secret, else why not.
 * `nowSeconds` is for tests.
 */
export function signatureProblem(secret, event, nowSeconds = Math.floor(Date.now() / 1000)) {
  const id = header(event.headers, "webhook-id");
  const timestamp = header(event.headers, "webhook-timestamp");
  const signature = header(event.headers, "webhook-signature");
  if (!id || !timestamp || !signature) return "the webhook signature headers are missing";
  if (typeof event.bodyRaw !== "string") return "the raw body is missing";
  if (!/^\d+$/.test(timestamp) || Math.abs(nowSeconds - Number(timestamp)) > TOLERANCE_SECONDS) {
    return "the webhook timestamp is too old or too new";
  }
  const expected = Buffer.from(sign(secret, id, timestamp, event.bodyRaw));
  const matches = signature.split(" ").some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && crypto.timingSafeEqual(given, expected);
  });
  return matches
    ? null
    : "the signature does not match";
}

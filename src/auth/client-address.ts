import { isIPv4 } from 'node:net';
import type { Request } from 'express';

/**
 * The address of the client behind a request, as the failed-attempt limit counts it and the
 * request log writes it (docs/configuration.md, `TRUST_PROXY`). Without `TRUST_PROXY` it is the
 * socket's peer: an `X-Forwarded-For` is a claim anyone can make. With it, Express's `req.ip`
 * under the `trust proxy` setting `createApp` gives it: the nearest address of
 * `X-Forwarded-For` that is not a trusted proxy, so clients behind one proxy count apart and a
 * client cannot pick its own address by sending the header. IPv4-mapped IPv6 (`::ffff:a.b.c.d`)
 * is written as IPv4, so one client counts once however its socket was opened.
 */
export function clientAddress(req: Request): string {
  // Without `trust proxy`, Express's `req.ip` is the socket's peer, after parsing any
  // X-Forwarded-For to no avail: read the peer directly (asked twice per request, on the hot path).
  const address = req.app.settings['trust proxy'] === false ? req.socket.remoteAddress : (req.ip ?? req.socket.remoteAddress);
  if (!address) return 'unknown';
  const mapped = address.startsWith('::ffff:') ? address.slice(7) : undefined;
  return mapped !== undefined && isIPv4(mapped) ? mapped : address;
}

import type { Request } from 'express';
import ipaddr from 'ipaddr.js';

type TrustFn = (address: string, hop: number) => boolean;

/**
 * The `X-Forwarded-For` the connector sends upstream for this request, so an upstream that
 * limits per client sees each client rather than one connector for everyone.
 *
 * The value is the socket's peer address (IPv4-mapped IPv6 shown as plain IPv4). An incoming
 * `X-Forwarded-For` is kept, with the peer appended (as a proxy does), only when Express's
 * `trust proxy` setting trusts that peer (`TRUST_PROXY`, set in `createApp`). Without it an
 * incoming header is a client's unverifiable claim and is dropped.
 */
export function forwardedFor(req: Request): string | undefined {
  const peer = req.socket.remoteAddress;
  if (!peer) return undefined;
  const address = ipaddr.isValid(peer) ? ipaddr.process(peer).toString() : peer;
  const trust = req.app.get('trust proxy fn') as TrustFn | undefined;
  const incoming = req.headers['x-forwarded-for'];
  if (incoming && trust?.(peer, 0)) return `${incoming}, ${address}`;
  return address;
}

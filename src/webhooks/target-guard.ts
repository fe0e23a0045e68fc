import { lookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The webhook target URL guard (docs/webhooks.md): https only, and every address a target
 * resolves to must be global unicast. Checked at subscribe and again at every delivery,
 * where the check sits in the socket's DNS lookup itself so a rebinding DNS answer cannot
 * slip past. Address classes come from ipaddr.js (a maintained registry of special ranges),
 * not from hand-written parsing.
 */

/** IPv6 global unicast space (RFC 4291); ipaddr's own special ranges inside it are refused too. */
const globalUnicast = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];
/** NAT64's well-known prefix (RFC 6052), which may only carry global IPv4 addresses. */
const wellKnownNat64 = ipaddr.parseCIDR('64:ff9b::/96') as [ipaddr.IPv6, number];

/**
 * True unless `address` is a global unicast IPv4 or IPv6 address. Refused among others:
 * loopback, private, link-local, unspecified, CGNAT, multicast, documentation, unique-local,
 * IPv4-compatible, SIIT (`::ffff:0:a.b.c.d`), 6to4 (`2002::/16`), Teredo (`2001::/32`),
 * local-use NAT64 (`64:ff9b:1::/48`). IPv4-mapped addresses are judged by their IPv4, and the
 * well-known NAT64 prefix by the IPv4 it carries. Anything that is not an address is refused.
 */
export function isForbiddenAddress(address: string): boolean {
  // net.isIP first: ipaddr.js also accepts legacy IPv4 forms (`127.1`, hex) that DNS never returns.
  if (isIP(address) === 0) return true;
  const parsed = ipaddr.process(address);
  if (parsed.kind() === 'ipv4') return parsed.range() !== 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  if (v6.match(wellKnownNat64)) return isForbiddenAddress(embeddedIpv4(v6));
  return v6.range() !== 'unicast' || !v6.match(globalUnicast);
}

/** The IPv4 address in the last 32 bits of an IPv6 address. */
function embeddedIpv4(v6: ipaddr.IPv6): string {
  const [high, low] = v6.parts.slice(6) as [number, number];
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

/** Why a URL may not be a target, or null when it may (host resolution not included). */
export function targetUrlProblem(text: string, allowPrivate: boolean): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'target_url must be an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowPrivate && url.protocol === 'http:')) return 'target_url must use https';
  if (url.username || url.password) return 'target_url must not contain credentials';
  if (allowPrivate) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && isForbiddenAddress(host)) return 'target_url must not point to a loopback, private or link-local address';
  if (host === 'localhost' || host.endsWith('.localhost')) return 'target_url must not point to a loopback, private or link-local address';
  return null;
}

/**
 * A `lookup` for http(s).request that refuses forbidden addresses (all of them are checked).
 * `resolve` is the system resolver; tests hand in one that answers what they need.
 */
export function guardedLookup(allowPrivate: boolean, resolve: typeof lookup = lookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as Array<{ address: string; family: number }>;
      if (!allowPrivate && list.some((a) => isForbiddenAddress(a.address))) {
        return callback(Object.assign(new Error(`${hostname} resolves to a forbidden address`), { code: 'EFORBIDDEN' }), '', 0);
      }
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** Resolves the host of a target and checks every address (subscribe-time check). */
export async function resolveTargetProblem(text: string, allowPrivate: boolean): Promise<string | null> {
  const problem = targetUrlProblem(text, allowPrivate);
  if (problem || allowPrivate) return problem;
  const host = new URL(text).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return null;
  return new Promise((resolve) => {
    lookup(host, { all: true }, (err, addresses) => {
      if (err) return resolve('target_url host does not resolve');
      if (addresses.some((a) => isForbiddenAddress(a.address))) {
        return resolve('target_url must not point to a loopback, private or link-local address');
      }
      resolve(null);
    });
  });
}

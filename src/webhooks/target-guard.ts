import { lookup } from 'node:dns';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * The webhook target URL guard (CONTRACT 6.4): https only, and no host that resolves to a
 * loopback, private, link-local, unspecified (or otherwise non-public) address, IPv6 and
 * IPv4-mapped forms included. Checked at subscribe and again at every delivery, where the
 * check sits in the socket's DNS lookup itself so a rebinding DNS answer cannot slip past.
 */
const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32], ['100::', 64],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** Expands an IPv6 text to its 8 16-bit groups. */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0]!;
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4[1]!.split('.').map(Number) as [number, number, number, number];
    text = text.slice(0, -v4[1]!.length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : new Array(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g || '0', 16));
}

/** The IPv4 address embedded in an IPv4-mapped, -compatible or NAT64 IPv6 address. */
function embeddedIpv4(address: string): string | null {
  const g = ipv6Groups(address);
  const v4 = () => `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && g[5] === 0xffff) return v4(); // ::ffff:a.b.c.d
  if (zeros(0, 6) && (g[6] !== 0 || g[7]! > 1)) return v4(); // ::a.b.c.d (deprecated)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return v4(); // 64:ff9b::/96
  return null;
}

export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  if (v4 !== null) return blocked.check(v4, 'ipv4');
  return blocked.check(address.split('%')[0]!, 'ipv6');
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

/** A `lookup` for http(s).request that refuses forbidden addresses (all of them are checked). */
export function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
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

import { lookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { AllowedTargets } from '../config.js';

/**
 * The webhook target URL guard (docs/webhooks.md): https only, and every address a target resolves to must be
 * global unicast, unless the target is allowed by `WEBHOOK_ALLOWED_TARGETS` (an exact origin,
 * or addresses in a listed range, http or https) or `WEBHOOK_ALLOW_PRIVATE_TARGETS` allows
 * everything. Checked at subscribe and again at every delivery, where the check sits in the
 * socket's DNS lookup itself so a rebinding DNS answer cannot slip past. Address classes come
 * from ipaddr.js (a maintained registry of special ranges), not from hand-written parsing.
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

/** Which targets a connector accepts besides public https ones. */
export interface TargetPolicy extends AllowedTargets {
  /** `WEBHOOK_ALLOW_PRIVATE_TARGETS`: any http(s) URL, whatever it resolves to. */
  allowAll: boolean;
}

/** The policy from the two settings; no allowed targets listed when `allowed` is undefined. */
export function targetPolicy(allowAll: boolean, allowed?: AllowedTargets): TargetPolicy {
  return { allowAll, origins: allowed?.origins ?? [], ranges: allowed?.ranges ?? [] };
}

/** True when something is allowed besides public https targets (so `http://` may be given). */
export function allowsHttp(policy: TargetPolicy): boolean {
  return policy.allowAll || policy.origins.length > 0 || policy.ranges.length > 0;
}

/** True when `address` falls in one of the policy's ranges (IPv4-mapped IPv6 as its IPv4). */
export function inAllowedRange(policy: TargetPolicy, address: string): boolean {
  if (policy.ranges.length === 0 || isIP(address) === 0) return false;
  const parsed = ipaddr.process(address);
  return policy.ranges.some(([network, bits]) => parsed.kind() === network.kind() && parsed.match(network, bits));
}

/** True when the URL's exact origin is allowed: then any address it resolves to is too. */
function originAllowed(policy: TargetPolicy, url: URL): boolean {
  return policy.allowAll || policy.origins.includes(url.origin);
}

/**
 * Whether a target of this scheme may connect to `address`: one in an allowed range always;
 * otherwise only over https and only when it is global unicast.
 */
export function addressPermitted(policy: TargetPolicy, address: string, https: boolean): boolean {
  return policy.allowAll || inAllowedRange(policy, address) || (https && !isForbiddenAddress(address));
}

const mustUseHttps = 'target_url must use https';
const mustNotBePrivate = 'target_url must not point to a loopback, private or link-local address';

/** A refusal, naming the origin when some targets are allowed (so the caller sees it is not one). */
function refusal(policy: TargetPolicy, url: URL, message: string): string {
  return allowsHttp(policy) ? `${message} (${url.origin} is not an allowed target)` : message;
}

/**
 * Why a URL may not be a target, or null when it may as far as the URL shows. An http URL
 * with a host name, under a policy with ranges, passes here: its addresses decide.
 */
export function targetUrlProblem(text: string, policy: TargetPolicy): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'target_url must be an absolute URL';
  }
  const https = url.protocol === 'https:';
  if (!https && url.protocol !== 'http:') return mustUseHttps;
  if (url.username || url.password) return 'target_url must not contain credentials';
  if (originAllowed(policy, url)) return null;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) {
    if (addressPermitted(policy, host, https)) return null;
    return refusal(policy, url, https ? mustNotBePrivate : mustUseHttps);
  }
  if (!https && policy.ranges.length === 0) return refusal(policy, url, mustUseHttps);
  // Without ranges, loopback names are refused before any lookup; with them, their addresses decide.
  if (policy.ranges.length === 0 && (host === 'localhost' || host.endsWith('.localhost'))) return refusal(policy, url, mustNotBePrivate);
  return null;
}

/**
 * A `lookup` for http(s).request that refuses a name when one of its addresses is not
 * permitted (all of them are checked). `resolve` is the system resolver; tests hand in one
 * that answers what they need.
 */
export function guardedLookup(permits: (address: string) => boolean, resolve: typeof lookup = lookup): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as Array<{ address: string; family: number }>;
      if (list.some((a) => !permits(a.address))) {
        return callback(Object.assign(new Error(`${hostname} resolves to a forbidden address`), { code: 'EFORBIDDEN' }), '', 0);
      }
      if (list.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      return callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** What a delivery to `url` may connect to: anything for an allowed origin, else per address. */
export function permittedAddresses(policy: TargetPolicy, url: URL): (address: string) => boolean {
  if (originAllowed(policy, url)) return () => true;
  const https = url.protocol === 'https:';
  return (address) => addressPermitted(policy, address, https);
}

/**
 * What a refusal at subscribe adds, so whoever tries a receiver on their own machine or network
 * learns the settings that allow it (docs/webhooks.md).
 */
export const privateTargetsHint =
  'to deliver to http:// or to a private or loopback address, start the connector with ' +
  'WEBHOOK_ALLOWED_TARGETS listing the origin (http://127.0.0.1:4000) or its range, ' +
  'or with WEBHOOK_ALLOW_PRIVATE_TARGETS=true (development only); npm run demo allows both';

/** A scheme or address refusal with the hint appended; other problems as they are. */
function hinted(problem: string | null): string | null {
  return problem?.startsWith(mustUseHttps) || problem?.startsWith(mustNotBePrivate) ? `${problem}; ${privateTargetsHint}` : problem;
}

/** Resolves the host of a target and checks every address (subscribe-time check). */
export async function resolveTargetProblem(text: string, policy: TargetPolicy): Promise<string | null> {
  return hinted(await targetProblem(text, policy));
}

async function targetProblem(text: string, policy: TargetPolicy): Promise<string | null> {
  const problem = targetUrlProblem(text, policy);
  if (problem) return problem;
  const url = new URL(text);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (originAllowed(policy, url) || isIP(host)) return null;
  const permits = permittedAddresses(policy, url);
  return new Promise((resolve) => {
    lookup(host, { all: true }, (err, addresses) => {
      if (err) return resolve('target_url host does not resolve');
      if (addresses.some((a) => !permits(a.address))) {
        return resolve(refusal(policy, url, url.protocol === 'https:' ? mustNotBePrivate : mustUseHttps));
      }
      resolve(null);
    });
  });
}

import { isIPv4, isIPv6 } from 'node:net';
import type { Request } from 'express';

/**
 * The externally visible base URL of this service, as used in the options `Link` header, the
 * served manifest and the OpenAPI `servers`: `PUBLIC_URL` when set (configuration is trusted).
 * Otherwise it is built from the request, and the `Host` header is client input: it is used
 * only when it is a well-formed `host[:port]` (a DNS name, an IPv4 literal or a bracketed IPv6
 * literal; port 1–65535). Anything else (`evil>; rel="preload", <https://attacker`, a path,
 * user info, an empty header) falls back to `localhost:<the port the request arrived on>`, so
 * a hostile header can neither inject into a `Link` header nor point a document elsewhere.
 * The result is always an absolute origin without a trailing slash (or `PUBLIC_URL`).
 */
export function publicBaseUrl(req: Request, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const host = wellFormedHost(req.headers.host) ?? fallbackHost(req);
  // Serialised by the URL parser: lower-cased, default port dropped, nothing left to escape.
  return new URL(`${req.protocol}://${host}`).origin;
}

/** Labels of a DNS name: letters, digits, hyphens (not at either end) and, for container names, underscores. */
const label = /^(?!-)[A-Za-z0-9_-]{1,63}(?<!-)$/;
const port = /^[1-9][0-9]{0,4}$/;

/** `host[:port]` if well-formed, else null. */
export function wellFormedHost(header: string | undefined): string | null {
  if (header === undefined || header.length > 260) return null;
  const match = /^(\[[^\]]*\]|[^:[\]]+)(?::([^:]*))?$/.exec(header);
  if (!match) return null;
  const [, name, portText] = match as unknown as [string, string, string | undefined];
  if (portText !== undefined && !(port.test(portText) && Number(portText) <= 65535)) return null;
  return wellFormedName(name) ? header : null;
}

function wellFormedName(name: string): boolean {
  // No zone id (`%eth0`): it means nothing to another machine and URL parsers refuse it.
  if (name.startsWith('[')) return !name.includes('%') && isIPv6(name.slice(1, -1));
  const labels = (name.endsWith('.') ? name.slice(0, -1) : name).split('.');
  if (name.length > 254 || !labels.every((part) => label.test(part))) return false;
  // A name whose last label is numeric is read as IPv4 by URL parsers: it must be one.
  return /^[0-9]+$/.test(labels.at(-1)!) ? isIPv4(name) : true;
}

function fallbackHost(req: Request): string {
  const localPort = req.socket.localPort;
  return localPort ? `localhost:${localPort}` : 'localhost';
}

/**
 * The same request with the next page's cursor, absolute: the target of a `Link: <…>;
 * rel="next"` header. Serialised by the URL parser, so nothing from the request line can close
 * the `<…>` or add a parameter.
 */
export function nextPageUrl(req: Request, publicUrl: string | undefined, cursor: string): string {
  const url = new URL(`${publicBaseUrl(req, publicUrl)}${req.baseUrl}${req.path}`);
  const search = new URLSearchParams(req.originalUrl.split('?')[1] ?? '');
  search.set('cursor', cursor);
  url.search = search.toString();
  return url.href;
}

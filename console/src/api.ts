import { basePath } from './base';
import { session, signOut, type Session } from './session';

/** An answer other than 2xx: `message` is the API's own (docs/api.md, Errors). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details: Array<{ path: string; message: string }> = [],
  ) {
    super(message);
  }
}

export interface ApiAnswer<T> {
  data: T;
  /** The next page's path and query, from `Link: <…>; rel="next"`. */
  next: string | null;
  /** `X-Total-Count`, when the answer has one. */
  total: number | null;
  status: number;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  body?: unknown;
  /** Query parameters; empty and undefined ones are left out. */
  query?: Record<string, string | number | boolean | undefined>;
  /** Sign in with this instead of the stored session (the sign-in check). */
  as?: Session;
}

/** The key's header: the device area reads `Authorization: Bearer`, the rest `X-API-Key`; the operator's token is a Bearer. */
function authHeaders(who: Session, path: string): Record<string, string> {
  if (who.role === 'operator' || path.startsWith('/devices')) return { Authorization: `Bearer ${who.secret}` };
  return { 'X-API-Key': who.secret };
}

function nextLink(link: string | null): string | null {
  const match = link ? /<([^>]+)>\s*;\s*rel="?next"?/.exec(link) : null;
  if (!match) return null;
  const url = new URL(match[1]!, location.origin);
  return url.pathname.slice(basePath.length) + url.search;
}

/** One API call. A 401 on the stored session signs out: the key was revoked or has expired. */
export async function api<T>(path: string, options: RequestOptions = {}): Promise<ApiAnswer<T>> {
  const who = options.as ?? session.value;
  if (!who) throw new ApiError(401, 'Signed out');
  const url = new URL(`${basePath}${path}`, location.origin);
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== '') url.searchParams.set(name, String(value));
  }
  const headers: Record<string, string> = { Accept: 'application/json', ...authHeaders(who, path) };
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(url, {
      method: options.method ?? 'GET',
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, 'The connector did not answer: is it running?');
  }
  const text = await res.text();
  let data: unknown = null;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const body = (data ?? {}) as { message?: unknown; details?: ApiError['details'] };
    const message = typeof body.message === 'string' ? body.message : `HTTP ${res.status}`;
    if (res.status === 401 && !options.as) signOut(`Signed out: ${message}`);
    throw new ApiError(res.status, message, Array.isArray(body.details) ? body.details : []);
  }
  const total = res.headers.get('X-Total-Count');
  return { data: data as T, next: nextLink(res.headers.get('Link')), total: total === null ? null : Number(total), status: res.status };
}

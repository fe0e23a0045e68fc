import { httpClient, HttpError, HttpMethod, type HttpResponse } from '@activepieces/pieces-common';
import { definition } from '../definition';
import type { ShapeCheck } from './shape';

/**
 * How the piece talks to the connector: the connection's base URL and key, one request, and
 * the connector's `{message}` error body turned into an error a flow run shows.
 */

export interface Credentials {
  base_url: string;
  api_key: string;
}

/**
 * The connection's values. Activepieces hands a custom auth over as `{type, props}`; older
 * releases and `validate` pass the props themselves.
 */
export function credentials(auth: unknown): Credentials {
  const holder = (auth ?? {}) as { props?: unknown };
  const props = (holder.props !== undefined && holder.props !== null ? holder.props : auth ?? {}) as Record<string, unknown>;
  const apiKey = typeof props['api_key'] === 'string' ? props['api_key'].trim() : '';
  if (!apiKey) throw new Error(`${definition.name}: the connection has no API key`);
  const rawBase = typeof props['base_url'] === 'string' && props['base_url'].trim() ? props['base_url'].trim() : definition.defaultBaseUrl;
  return { base_url: rawBase.replace(/\/+$/, ''), api_key: apiKey };
}

export class ConnectorError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'ConnectorError';
  }
}

/** A dotted path into an object (`account.name`); undefined when a step is missing. */
export function pick(value: unknown, path: string): unknown {
  return path.split('.').reduce<unknown>((at, part) => (at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[part] : undefined), value);
}

/** Fills `{name}` path segments from values, URL-encoded; a missing one is an error. */
export function fillPath(path: string, values: Record<string, unknown>): string {
  return path.replace(/\{([A-Za-z][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined || value === null || value === '') throw new ConnectorError(`${definition.name}: ${name} is missing`, null);
    return encodeURIComponent(String(value));
  });
}

export interface CallOptions {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
  /** `bearer`: `Authorization: Bearer <key>` (the device area's header); else the key header. */
  keyIn?: 'api_key' | 'bearer';
  /** Statuses answered without throwing (a hook already gone when deleting). */
  allow?: number[];
  /** What is wrong with a successful answer's body, or null: a problem is thrown. */
  check?: ShapeCheck;
}

/**
 * How long a request may wait for the connector's answer: 30 s, or CONNECTOR_TIMEOUT_MS (the
 * piece's tests shorten it to try a connector that never answers).
 */
export function timeoutMs(): number {
  const value = Number(process.env['CONNECTOR_TIMEOUT_MS']);
  return Number.isInteger(value) && value > 0 ? value : 30_000;
}

function messageOf(status: number, body: unknown): string {
  const data = body !== null && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  let message = typeof data['message'] === 'string' && data['message'] ? data['message'] : `HTTP ${status}`;
  const details = data['details'];
  if (Array.isArray(details) && details.length > 0) {
    const parts = details.map((detail: unknown) => {
      const d = (detail ?? {}) as { path?: unknown; message?: unknown };
      return d.path ? `${String(d.path)}: ${String(d.message)}` : String(d.message);
    });
    message += ` (${parts.join('; ')})`;
  }
  return message;
}

/**
 * One request to the connector. A 4xx/5xx answer throws a ConnectorError with its message; so
 * do a success whose body is not JSON (the HTTP client leaves it as text), one that fails
 * `check`, and no answer within timeoutMs().
 */
export async function call<T = unknown>(creds: Credentials, options: CallOptions): Promise<HttpResponse<T>> {
  const response = await send<T>(creds, options);
  const where = `${options.method} ${options.path.split('?')[0]}`;
  const body: unknown = response.body;
  const problem =
    response.status >= 400
      ? null
      : typeof body === 'string' && body.trim() !== ''
        ? "the answer is not valid JSON; is the base URL the connector's?"
        : options.check
          ? options.check(body)
          : null;
  if (problem) throw new ConnectorError(`${definition.name}: unexpected answer to ${where} (HTTP ${response.status}): ${problem}.`, 502);
  return response;
}

/** The HTTP client's request, raced against timeoutMs(): it has no way to say it timed out. */
async function send<T>(creds: Credentials, options: CallOptions): Promise<HttpResponse<T>> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (options.keyIn === 'bearer') headers['Authorization'] = `Bearer ${creds.api_key}`;
  else headers[definition.apiKeyHeader] = creds.api_key;
  const ms = timeoutMs();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new ConnectorError(`${definition.name}: no answer from the connector within ${ms / 1000} s (${options.method} ${options.path.split('?')[0]})`, null)),
      ms,
    );
  });
  try {
    return await Promise.race([
      httpClient.sendRequest<T>({
        method: options.method as HttpMethod,
        url: creds.base_url + options.path,
        headers,
        queryParams: options.query ?? {},
        ...(options.body !== undefined ? { body: options.body } : {}),
        // A little past the race, so the request is given up once its answer no longer counts.
        timeout: ms + 1_000,
      }),
      late,
    ]);
  } catch (err) {
    if (err instanceof ConnectorError) throw err;
    if (err instanceof HttpError) {
      const { status, body } = err.response;
      // The HTTP client reports a request that got no answer (refused, timed out) as a 500
      // without a body; the connector's own errors always have one.
      if (status === 500 && (body === undefined || body === '')) throw new ConnectorError(`${definition.name}: cannot reach ${creds.base_url} (no HTTP answer to ${options.method} ${options.path})`, null);
      if (options.allow?.includes(status)) return { status, body: body as T };
      throw new ConnectorError(`${definition.name}: ${messageOf(status, body)} (HTTP ${status} on ${options.method} ${options.path.split('?')[0]})`, status);
    }
    const reason = err instanceof Error ? err.message : String(err);
    throw new ConnectorError(`${definition.name}: cannot reach ${creds.base_url}: ${reason}`, null);
  } finally {
    clearTimeout(timer);
  }
}

/** The URL of the next page in a `Link: <…>; rel="next"` header, if any. */
export function nextLink(headers: unknown): string | null {
  const raw = headers !== null && typeof headers === 'object' ? (headers as Record<string, unknown>)['link'] : undefined;
  const text = Array.isArray(raw) ? raw.join(',') : typeof raw === 'string' ? raw : '';
  for (const part of text.split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (match && match[1]) return match[1];
  }
  return null;
}

/** A list value as strings: arrays as they are, a comma-separated text split. */
export function toList(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  const items = Array.isArray(value) ? value : String(value).split(',');
  return items.map((item) => String(item).trim()).filter((item) => item !== '');
}

export const isEmpty = (value: unknown): boolean =>
  value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

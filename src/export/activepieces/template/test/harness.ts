import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { definition, signageConnector } from '../src/index';

/**
 * What the tests share: the piece, a connection to the connector under test
 * (CONNECTOR_BASE_URL, CONNECTOR_API_KEY), contexts shaped like the ones Activepieces hands to
 * props, actions and triggers, a Map-backed store, a local webhook receiver and the
 * connector's test control (CONNECTOR_CONTROL_URL) that makes devices go offline and back.
 */

export { definition, signageConnector };

export const baseUrl = (process.env['CONNECTOR_BASE_URL'] || definition.defaultBaseUrl).replace(/\/+$/, '');
const key = process.env['CONNECTOR_API_KEY'];
if (!key) throw new Error(`Set CONNECTOR_API_KEY to a key of the connector at ${baseUrl} (see README.md).`);
export const apiKey: string = key;
export const otherApiKey = process.env['CONNECTOR_OTHER_API_KEY'] || null;
export const controlUrl = process.env['CONNECTOR_CONTROL_URL'] || null;

/** The connection as Activepieces passes it to actions, triggers and dropdowns. */
export const connection = (api_key = apiKey) => ({ type: 'CUSTOM_AUTH', props: { base_url: baseUrl, api_key } });

export interface MapStore {
  map: Map<string, unknown>;
  put<T>(key: string, value: T): Promise<T>;
  get<T>(key: string): Promise<T | null>;
  delete(key: string): Promise<void>;
}

export function mapStore(): MapStore {
  const map = new Map<string, unknown>();
  return {
    map,
    async put<T>(key: string, value: T) {
      map.set(key, JSON.parse(JSON.stringify(value)));
      return value;
    },
    async get<T>(key: string) {
      return map.has(key) ? (JSON.parse(JSON.stringify(map.get(key))) as T) : null;
    },
    async delete(key: string) {
      map.delete(key);
    },
  };
}

/** A trigger or action context: only what the piece reads. */
export function context(values: { propsValue?: Record<string, unknown>; store?: MapStore; webhookUrl?: string; payload?: unknown; auth?: unknown }): never {
  return {
    auth: values.auth ?? connection(),
    propsValue: values.propsValue ?? {},
    store: values.store ?? mapStore(),
    webhookUrl: values.webhookUrl ?? 'http://127.0.0.1:9/unused',
    payload: values.payload ?? { body: {}, headers: {}, queryParams: {} },
  } as never;
}

export const actions = signageConnector.actions();
export const triggers = signageConnector.triggers();

/** A prop of an action or trigger, with its `options` as Activepieces calls it. */
export function dropdown(props: Record<string, unknown>, key: string) {
  const prop = props[key] as { options?: (propsValue: Record<string, unknown>, ctx: { searchValue?: string }) => Promise<{ disabled?: boolean; placeholder?: string; options: Array<{ label: string; value: string }> }>; refreshers?: string[] };
  if (!prop || typeof prop.options !== 'function') throw new Error(`${key} is not a dropdown`);
  return {
    refreshers: prop.refreshers ?? [],
    options: (propsValue: Record<string, unknown> = {}, searchValue?: string) =>
      prop.options!({ auth: connection(), ...propsValue }, searchValue === undefined ? {} : { searchValue }),
  };
}

/** A direct call to the connector (for what the piece does not expose, such as GET /v1/hooks). */
export async function connectorGet(path: string, bearer = false): Promise<{ status: number; body: unknown; headers: Headers }> {
  const response = await fetch(baseUrl + path, { headers: bearer ? { Authorization: `Bearer ${apiKey}` } : { 'X-API-Key': apiKey } });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

export async function control(deviceId: string, status: 'offline' | 'online'): Promise<void> {
  if (!controlUrl) throw new Error('CONNECTOR_CONTROL_URL is not set');
  const response = await fetch(`${controlUrl}/devices/${encodeURIComponent(deviceId)}/${status}`, { method: 'POST' });
  if (response.status !== 204) throw new Error(`the control answered ${response.status} for ${deviceId} ${status}`);
}

export async function waitFor<T>(what: string, check: () => Promise<T | null | undefined>, timeoutMs = 20_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export interface Delivery {
  headers: Record<string, string>;
  rawBody: string;
}

/** A local HTTP server standing in for Activepieces' webhook endpoint. */
export async function startReceiver(): Promise<{ url: string; deliveries: Delivery[]; close(): Promise<void> }> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      deliveries.push({ headers: flatHeaders(req.headers), rawBody: Buffer.concat(chunks).toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/flow-test`,
    deliveries,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value;
  return flat;
}

/**
 * What Make does with this app's code, reduced to what the tests need: it reads the components
 * listed in makecomapp.json, builds each request from its templates (base URL and headers from
 * the base, `qs`, `body`), sends it with fetch, turns a 4xx/5xx into the error the base
 * describes, fails a request that takes longer than its `timeout` (CONNECTOR_TIMEOUT_MS, when
 * set, stands in for it so the tests need not wait 30 s), a body that is not JSON where
 * `response.type` is `json`, and an answer its `response.valid` rejects, iterates and outputs the items, follows `pagination` up to `response.limit`, keeps
 * a polling trigger's position (`response.trigger`) between runs, and processes webhook
 * deliveries. The tests send everything to a live connector.
 */

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { evaluate } from './iml.js';

export const appDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const readJson = (path) => JSON.parse(readFileSync(join(appDir, path), 'utf8'));

/** makecomapp.json with every code file read: `app.module.getDevice.communication` and so on. */
export function loadApp() {
  const manifest = readJson('makecomapp.json');
  const app = { manifest, base: readJson(manifest.generalCodeFiles.base), groups: readJson(manifest.generalCodeFiles.groups) };
  for (const [kind, components] of Object.entries(manifest.components)) {
    app[kind] = {};
    for (const [name, metadata] of Object.entries(components)) {
      const codes = Object.fromEntries(Object.entries(metadata.codeFiles).filter(([, path]) => path).map(([code, path]) => [code, readJson(path)]));
      app[kind][name] = { ...metadata, ...codes };
    }
  }
  return app;
}

export const env = {
  baseUrl: (process.env.CONNECTOR_BASE_URL || '').replace(/\/+$/, ''),
  apiKey: process.env.CONNECTOR_API_KEY || '',
  otherApiKey: process.env.CONNECTOR_OTHER_API_KEY || '',
  controlUrl: process.env.CONNECTOR_CONTROL_URL || '',
  deviceCount: Number(process.env.PLATFORM_TEST_DEVICE_COUNT || 0),
};
/** For the tests that call the connector: fails with what to set when it is not given. */
export function requireConnector() {
  if (!env.baseUrl || !env.apiKey) throw new Error('Set CONNECTOR_BASE_URL and CONNECTOR_API_KEY to a running connector and one of its keys (see README.md).');
}

/** The connection's data as Make keeps it after the connection was created. */
export const connectionData = (apiKey = env.apiKey) => ({ base_url: env.baseUrl, api_key: apiKey });

export class MakeError extends Error {
  constructor(message, type, statusCode) {
    super(message);
    this.type = type;
    this.statusCode = statusCode;
  }
}

const withoutEmpty = (object) => Object.fromEntries(Object.entries(object || {}).filter(([, value]) => value !== undefined && value !== null));

/**
 * Make's `encodeUrl`: values put into the path by IML are encoded, the literal parts are kept.
 * A value at the very start is the base URL (the connection's `base_url`) and is kept as it is.
 */
function evaluateUrl(template, scope) {
  return template.replace(/\{\{([\s\S]*?)\}\}/g, (match, _source, offset) => {
    const value = evaluate(match, scope);
    if (value === undefined || value === null) return '';
    return offset === 0 ? String(value) : encodeURIComponent(String(value));
  });
}

/** One HTTP request from a request specification, merged with the base (`base` may be null). */
export async function send(spec, scope, base, log = []) {
  let url = evaluateUrl(spec.url, scope);
  if (base && url.startsWith('/')) url = evaluate(base.baseUrl, scope) + url;
  const qs = withoutEmpty({ ...evaluate(base?.qs, scope), ...evaluate(spec.qs, scope) });
  const target = new URL(url);
  for (const [key, value] of Object.entries(qs)) target.searchParams.set(key, String(value));
  const headers = withoutEmpty({ ...evaluate(base?.headers, scope), ...evaluate(spec.headers, scope) });
  const method = spec.method || 'GET';
  const init = { method, headers: { ...headers } };
  if (spec.body !== undefined) {
    init.body = JSON.stringify(evaluate(spec.body, scope));
    init.headers['content-type'] = 'application/json';
  }
  log.push({ method, url: target.toString(), headers: init.headers, body: init.body === undefined ? undefined : JSON.parse(init.body) });
  const timeout = Number(process.env.CONNECTOR_TIMEOUT_MS) || spec.timeout || base?.timeout || 40_000;
  init.signal = AbortSignal.timeout(timeout);
  let response;
  let text;
  try {
    response = await fetch(target, init);
    text = await response.text();
  } catch (err) {
    if (err?.name === 'TimeoutError') throw new MakeError(`ESOCKETTIMEDOUT: no answer within ${timeout / 1000} s (${method} ${target.pathname})`, 'ConnectionError', null);
    throw err;
  }
  let body = text;
  let parsed = true;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: Make keeps the text, unless the response type says JSON.
    parsed = false;
  }
  const result = { statusCode: response.status, headers: Object.fromEntries(response.headers), body };
  if (response.status >= 400) throw errorFor(spec, base, { ...scope, ...result });
  if (!parsed && (spec.response?.type ?? base?.response?.type) === 'json') throw new MakeError('Source is not valid JSON.', 'DataError', response.status);
  const valid = spec.response?.valid ?? base?.response?.valid;
  if (valid !== undefined) {
    const directive = typeof valid === 'object' && valid !== null ? valid : { condition: valid };
    const resultScope = { ...scope, ...result };
    if (!evaluate(directive.condition, resultScope)) {
      throw new MakeError(String(evaluate(directive.message ?? 'The response is not valid.', resultScope)), directive.type ? evaluate(directive.type, resultScope) : 'RuntimeError', response.status);
    }
  }
  return result;
}

/** The error the request's (or the base's) `response.error` describes. */
function errorFor(spec, base, scope) {
  const error = spec.response?.error ?? base?.response?.error ?? { message: `HTTP ${scope.statusCode}` };
  const chosen = typeof error === 'string' ? { message: error } : error[String(scope.statusCode)] ?? error;
  return new MakeError(String(evaluate(chosen.message, scope)), chosen.type ? evaluate(chosen.type, scope) : 'RuntimeError', scope.statusCode);
}

/**
 * A module's or RPC's communication run to the end: every page, each item through `output`,
 * stopping at `response.limit`. Returns the bundles and the requests sent.
 */
export async function run(spec, scope, base) {
  const log = [];
  const response = spec.response || {};
  const limit = response.limit === undefined ? Infinity : Number(evaluate(response.limit, scope));
  const bundles = [];
  let request = spec;
  for (let page = 1; ; page += 1) {
    const result = await send(request, scope, base, log);
    const pageScope = { ...scope, ...result };
    const items = response.iterate ? evaluate(typeof response.iterate === 'string' ? response.iterate : response.iterate.container, pageScope) : [undefined];
    if (!Array.isArray(items)) throw new Error(`response.iterate gave ${JSON.stringify(items)}, not an array`);
    for (const item of items) {
      if (bundles.length >= limit) break;
      const itemScope = { ...pageScope, item };
      bundles.push(evaluate(response.output === undefined ? (response.iterate ? '{{item}}' : '{{body}}') : response.output, itemScope));
    }
    const pagination = spec.pagination;
    if (!pagination || bundles.length >= limit || items.length === 0) break;
    const nextScope = { ...pageScope, pagination: { page: page + 1 } };
    if (pagination.condition !== undefined && !evaluate(pagination.condition, nextScope)) break;
    request = { ...spec, qs: { ...spec.qs, ...evaluate(pagination.qs, nextScope) } };
  }
  return { bundles, log };
}

/** Creating a connection: the connection's communication with its parameters; returns its label. */
export async function testConnection(app, parameters) {
  const [connection] = Object.values(app.connection);
  const result = await send(connection.communication, { parameters }, null);
  const scope = { parameters, ...result };
  return { label: evaluate(connection.communication.response?.metadata?.value, scope), data: evaluate(connection.communication.response?.data, scope) };
}

/** An RPC as a dropdown or search dialog calls it: the module's parameters plus the RPC's own. */
export const runRpc = (app, name, parameters = {}, connection = connectionData()) => run(app.rpc[name].communication, { connection, parameters }, app.base);

/** A search module with its mapped parameters. */
export const runModule = (app, name, parameters = {}, connection = connectionData()) => run(app.module[name].communication, { connection, parameters }, app.base);

/** Attaching a webhook (the user saved it in a scenario): returns the data Make keeps for it. */
export async function attach(app, name, url, parameters = {}, connection = connectionData()) {
  const spec = app.webhook[name].attach;
  const scope = { connection, parameters, webhook: { url } };
  const result = await send(spec, scope, app.base);
  return evaluate(spec.response?.data ?? {}, { ...scope, ...result });
}

/** Detaching a webhook (the webhook was deleted in Make). */
export async function detach(app, name, data, connection = connectionData()) {
  return send(app.webhook[name].detach, { connection, webhook: data, parameters: {} }, app.base);
}

/** One delivery arriving at the webhook's URL: the bundles the instant trigger outputs. */
export function receive(app, name, delivery, data = {}) {
  const spec = app.webhook[name].communication;
  const scope = { body: delivery.body, headers: delivery.headers, query: {}, webhook: data, parameters: {} };
  if (spec.condition !== undefined && !evaluate(spec.condition, scope)) return [];
  const items = spec.iterate ? evaluate(typeof spec.iterate === 'string' ? spec.iterate : spec.iterate.container, scope) : [undefined];
  return items.map((item) => evaluate(spec.output ?? '{{body}}', { ...scope, item }));
}

/**
 * One run of a polling trigger. Make keeps the position of the newest item it has emitted
 * (`response.trigger`: date, then id) and emits, oldest first, only items after it. `state`
 * null is the first run after the user chose where to start at the newest item: it records
 * the position and emits nothing. Returns the bundles and the state to keep.
 */
export async function poll(app, name, parameters, state, connection = connectionData()) {
  const spec = app.module[name].communication;
  const trigger = spec.response.trigger;
  const { bundles, log } = await run({ ...spec, response: { ...spec.response, output: '{{item}}' } }, { connection, parameters }, app.base);
  const positioned = bundles.map((item) => {
    const scope = { connection, parameters, item };
    return { item, date: trigger.type === 'date' ? Date.parse(evaluate(trigger.date, scope)) : 0, id: String(evaluate(trigger.id, scope)) };
  });
  const after = (a, b) => a.date > b.date || (a.date === b.date && a.id > b.id);
  positioned.sort((a, b) => (after(a, b) ? 1 : after(b, a) ? -1 : 0));
  const newest = positioned[positioned.length - 1];
  if (state === null) return { bundles: [], state: newest ? { date: newest.date, id: newest.id } : { date: -Infinity, id: '' }, log };
  const fresh = positioned.filter((entry) => after(entry, state));
  const output = spec.response.output ?? '{{item}}';
  return {
    bundles: fresh.map((entry) => evaluate(output, { connection, parameters, item: entry.item })),
    state: fresh.length ? { date: fresh[fresh.length - 1].date, id: fresh[fresh.length - 1].id } : state,
    log,
  };
}

/** The connector's own answer to a GET, for comparing with what the app produced. */
export async function connectorGet(path, { bearer = false, apiKey = env.apiKey } = {}) {
  const response = await fetch(env.baseUrl + path, { headers: bearer ? { Authorization: `Bearer ${apiKey}` } : { 'X-API-Key': apiKey } });
  if (!response.ok) throw new Error(`GET ${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

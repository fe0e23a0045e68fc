import { afterEach, describe, expect, test } from '@jest/globals';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { catalog } from '../fixtures/catalog.js';

/**
 * `TRUST_PROXY` (docs/configuration.md): behind a real reverse proxy (a small node:http proxy
 * on 127.0.0.1:0 that appends the peer to X-Forwarded-For, as nginx's
 * `$proxy_add_x_forwarded_for` does), the failed-attempt limit counts each client apart and
 * the request log names each client; a client's own X-Forwarded-For is never believed.
 * Clients are told apart by the loopback address their sockets are bound to (127.0.0.2,
 * 127.0.0.3, …); the proxy connects to the connector from 127.0.0.9.
 */

const proxyAddress = '127.0.0.9';
const limit = 20;
let opened: Array<{ close(): Promise<void> }> = [];

afterEach(async () => {
  for (const item of opened.reverse()) await item.close();
  opened = [];
});

function listen(server: Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  opened.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return new Promise((resolve) => server.once('listening', () => resolve((server.address() as AddressInfo).port)));
}

/** The connector listening on a port, with TRUST_PROXY as given and its log lines kept. */
async function connector(trustProxy: string): Promise<{ t: TestApp; port: number; lines: string[] }> {
  const lines: string[] = [];
  const t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(), logLines: lines, env: { TRUST_PROXY: trustProxy, LOG_LEVEL: 'info' } });
  opened.push(t);
  return { t, port: await listen(createServer(t.app)), lines };
}

/** A reverse proxy in front of `port` that appends its peer's address to X-Forwarded-For. */
async function proxy(port: number): Promise<number> {
  const server = createServer((req, res) => {
    const peer = req.socket.remoteAddress ?? '';
    const prior = req.headers['x-forwarded-for'];
    const headers = { ...req.headers, 'x-forwarded-for': prior ? `${String(prior)}, ${peer}` : peer };
    const upstream = httpRequest(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers, localAddress: proxyAddress, agent: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  return listen(server);
}

/** GET /v1/menus with a (wrong) key from a socket bound to `from`; the status. */
function attempt(port: number, from: string, key: string, forwardedFor?: string): Promise<number> {
  const headers: Record<string, string> = { 'x-api-key': key };
  if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/menus', headers, localAddress: from, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

const wrongKey = (i: number) => `sk_wrong_guess_${String(i).padStart(4, '0')}_abcdef`;

/** The `client` of each request log line, in order, once `count` lines were written. */
async function loggedClients(lines: string[], count: number): Promise<string[]> {
  const requests = () => lines.map((l) => JSON.parse(l) as { msg: string; client?: string }).filter((l) => l.msg === 'request');
  for (let i = 0; i < 1000 && requests().length < count; i++) await new Promise((resolve) => setImmediate(resolve));
  return requests().map((l) => String(l.client));
}

describe('TRUST_PROXY behind a real proxy', () => {
  test('a hop count: two clients behind the proxy are limited apart, and a client cannot pick its address', async () => {
    const { port, lines } = await connector('1');
    const front = await proxy(port);
    // Client A guesses 20 times, each time claiming another address in X-Forwarded-For.
    for (let i = 0; i < limit; i++) expect(await attempt(front, '127.0.0.2', wrongKey(i), `198.51.100.${i + 1}`)).toBe(401);
    expect(await attempt(front, '127.0.0.2', wrongKey(100), '203.0.113.50')).toBe(429);
    // Client B, behind the same proxy, is another client: its wrong key is a 401, not A's 429.
    expect(await attempt(front, '127.0.0.3', wrongKey(200))).toBe(401);
    const clients = await loggedClients(lines, limit + 2);
    expect(clients).toEqual([...Array<string>(limit + 1).fill('127.0.0.2'), '127.0.0.3']);
  });

  test('proxy addresses: a header from a peer that is not a listed proxy is ignored', async () => {
    const { port, lines } = await connector(`${proxyAddress}/32`);
    const front = await proxy(port);
    // Client C talks to the connector directly and claims a new address each time.
    for (let i = 0; i < limit; i++) expect(await attempt(port, '127.0.0.4', wrongKey(i), `198.51.100.${i + 1}`)).toBe(401);
    expect(await attempt(port, '127.0.0.4', wrongKey(100), '127.0.0.5')).toBe(429);
    // Through the listed proxy, the forwarded address counts: client D is not C.
    expect(await attempt(front, '127.0.0.5', wrongKey(200))).toBe(401);
    const clients = await loggedClients(lines, limit + 2);
    expect(clients).toEqual([...Array<string>(limit + 1).fill('127.0.0.4'), '127.0.0.5']);
  });

  test('unset: the socket address, so everyone behind the proxy is one client (the proxy)', async () => {
    const lines: string[] = [];
    const t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(), logLines: lines, env: { LOG_LEVEL: 'info' } });
    opened.push(t);
    const port = await listen(createServer(t.app));
    const front = await proxy(port);
    for (let i = 0; i < limit; i++) expect(await attempt(front, '127.0.0.2', wrongKey(i))).toBe(401);
    expect(await attempt(front, '127.0.0.3', wrongKey(200))).toBe(429);
    expect(new Set(await loggedClients(lines, limit + 1))).toEqual(new Set([proxyAddress]));
  });
});

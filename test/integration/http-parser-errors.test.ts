import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import type { Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { createHttpServer, serverLimits } from '../../src/http/server.js';
import { buildTestApp, type TestApp } from '../helpers/app.js';

/**
 * Requests Node's HTTP parser refuses never reach Express; they must still get the JSON
 * error shape (docs/api.md, errors). Raw TCP against the server as main.ts creates it.
 */

let t: TestApp;
let server: Server;
let port = 0;

beforeAll(async () => {
  t = await buildTestApp();
  server = createHttpServer(t.app).listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
});

interface Raw {
  text: string;
  /** Whether the server closed the connection (within the test's wait). */
  closed: boolean;
}

/** Sends raw bytes and collects everything the server writes until it closes (or `waitMs`). */
function exchange(bytes: string, waitMs = 3_000): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, closed: false });
    }, waitMs);
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closed: true });
    });
    socket.end(bytes);
  });
}

interface Parsed {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Splits the responses in `text` (several with keep-alive). */
function responses(text: string): Parsed[] {
  const out: Parsed[] = [];
  let rest = text;
  while (rest.startsWith('HTTP/1.1 ')) {
    const end = rest.indexOf('\r\n\r\n');
    const [statusLine, ...lines] = rest.slice(0, end).split('\r\n');
    const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    const length = Number(headers['content-length'] ?? 0);
    const raw = rest.slice(end + 4, end + 4 + length);
    out.push({ status: Number(statusLine!.split(' ')[1]), headers, body: headers['content-type']?.startsWith('application/json') ? JSON.parse(raw) : raw });
    rest = rest.slice(end + 4 + length);
  }
  return out;
}

async function refused(bytes: string): Promise<Parsed> {
  const { text, closed } = await exchange(bytes);
  expect(closed).toBe(true);
  const all = responses(text);
  expect(all).toHaveLength(1);
  expect(all[0]!.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(all[0]!.headers.connection).toBe('close');
  return all[0]!;
}

describe("Node's parser errors answer JSON and close", () => {
  test('headers over 16 KiB: 431', async () => {
    const res = await refused(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(res).toMatchObject({ status: 431, body: { message: 'Request header fields too large' } });
  });

  test('a URL over 16 KiB: 431', async () => {
    const res = await refused(`GET /devices/${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(res).toMatchObject({ status: 431, body: { message: 'Request header fields too large' } });
  });

  test.each([
    ['a bad request line', 'GARBAGE\r\n\r\n'],
    ['an unknown method', 'FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a bad HTTP version', 'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n'],
    ['a control character in a header', 'GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\u0001b\r\n\r\n'],
  ])('%s: 400', async (_case, bytes) => {
    expect(await refused(bytes)).toMatchObject({ status: 400, body: { message: 'Bad request' } });
  });

  test('a bad chunked body: the request (already routed) gets its answer, then a JSON 400 closes', async () => {
    const { text, closed } = await exchange('POST /v1/hooks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    expect(closed).toBe(true);
    const all = responses(text);
    expect(all.map((r) => r.body)).toEqual([{ message: 'Missing API key' }, { message: 'Bad request' }]);
    expect(all[1]).toMatchObject({ status: 400, headers: { connection: 'close' } });
  });

  test('after a good keep-alive request, a bad one gets its own JSON answer; the first is intact', async () => {
    const { text, closed } = await exchange('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nFOO / HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(closed).toBe(true);
    const [first, second] = responses(text);
    expect(first).toMatchObject({ status: 200 });
    expect(second).toMatchObject({ status: 400, body: { message: 'Bad request' } });
  });

  test('a client that is gone before the answer does not disturb the server', async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write(`GET / HTTP/1.1\r\nX-Big: ${'a'.repeat(40_000)}`);
        socket.destroy();
        resolve();
      });
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { text } = await exchange('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(responses(text)[0]).toMatchObject({ status: 200 });
  });
});

describe('methods the parser accepts but no route serves', () => {
  test.each(['PROPFIND', 'PURGE', 'SEARCH', 'DELETE', 'TRACE'])('%s answers JSON', async (method) => {
    const { text } = await exchange(`${method} /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    const [res] = responses(text);
    expect(res!.status).toBeGreaterThanOrEqual(400);
    expect(res!.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res!.body).toEqual({ message: expect.any(String) });
  });
});

describe("the server's own time limits (src/http/server.ts serverLimits)", () => {
  test('the shipped limits are set explicitly on the server main.ts creates', () => {
    expect(server.headersTimeout).toBe(serverLimits.headersTimeoutMs);
    expect(server.requestTimeout).toBe(serverLimits.requestTimeoutMs);
    expect(server.keepAliveTimeout).toBe(serverLimits.keepAliveTimeoutMs);
    expect(serverLimits).toEqual({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 5_000, checkIntervalMs: 1_000 });
  });

  test('a client sending its headers a byte at a time is answered 408 and closed at headersTimeout, not a minute later', async () => {
    const limits = { headersTimeoutMs: 1_000, requestTimeoutMs: 2_000, keepAliveTimeoutMs: 500, checkIntervalMs: 200 };
    const slow = createHttpServer(t.app, limits).listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => slow.once('listening', () => resolve()));
    const started = Date.now();
    const result = await new Promise<{ text: string; ms: number }>((resolve) => {
      const socket = connect((slow.address() as AddressInfo).port, '127.0.0.1');
      let text = '';
      const drip = setInterval(() => socket.writable && socket.write('a'), 100);
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      socket.on('data', (chunk) => (text += chunk));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(drip);
        resolve({ text, ms: Date.now() - started });
      });
    });
    slow.closeAllConnections();
    await new Promise<void>((resolve) => slow.close(() => resolve()));
    expect(result.text).toMatch(/^HTTP\/1\.1 408/);
    expect(result.text).toContain('{"message":"Request timeout"}');
    // Cut by the server's timeout (about 1.2 s): the client alone would drip forever. Generous for a busy machine.
    expect(result.ms).toBeLessThan(10_000);
  });
});

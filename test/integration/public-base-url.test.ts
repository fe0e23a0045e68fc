import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { wellFormedHost } from '../../src/http/base-url.js';

// With PUBLIC_URL unset, the base URL of links and documents comes from the request's Host
// header, which is client input. Three places use it: the options `Link` header, the served
// manifest and the OpenAPI `servers`. A malformed Host must not reach any of them.

const hostile = 'evil>; rel="preload", <https://attacker';

let t: TestApp;
let server: Server;
let port: number;

beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog() });
  server = t.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await t.close();
});

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET with a Host header of our choosing (fetch would not let us set it). */
function get(path: string, host: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { Host: host, 'X-API-Key': keys.ana } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

/** The three base URLs the service derives from one request's Host. */
async function baseUrlsFor(host: string): Promise<{ link: string; manifest: string; servers: string }> {
  const options = await get('/v1/menus/options?limit=1', host);
  const manifest = await get('/v1/manifest', host);
  const openapi = await get('/openapi.json', host);
  expect([options.status, manifest.status, openapi.status]).toEqual([200, 200, 200]);
  return {
    link: String(options.headers.link),
    manifest: JSON.parse(manifest.body).baseUrl as string,
    servers: (JSON.parse(openapi.body).servers as Array<{ url: string }>)[0]!.url,
  };
}

describe('a malformed Host header is never used', () => {
  test.each([hostile, 'attacker.example/path', 'user@attacker.example', 'attacker.example:0', 'attacker.example:99999', '[::1', ' '])(
    'Host %p → links and documents use localhost:<port>; the Link header has one entry',
    async (host) => {
      const urls = await baseUrlsFor(host);
      expect(urls.manifest).toBe(`http://localhost:${port}`);
      expect(urls.servers).toBe(`http://localhost:${port}`);
      expect(urls.link).toMatch(new RegExp(`^<http://localhost:${port}/v1/menus/options\\?limit=1&cursor=[^<>]+>; rel="next"$`));
    },
  );

  test('nothing from the query can add a Link entry either', async () => {
    const injected = encodeURIComponent('>; rel="preload", <https://attacker');
    const options = await get(`/v1/menus/options?limit=1&x=${injected}&y="><`, 'connector.example:8443');
    const link = String(options.headers.link);
    expect(link).toMatch(/^<http:\/\/connector\.example:8443\/v1\/menus\/options\?[^<>]+>; rel="next"$/);
    expect(new URL(link.slice(1, link.indexOf('>'))).searchParams.get('x')).toBe('>; rel="preload", <https://attacker');
  });
});

describe('a well-formed Host header is used as given (normalised)', () => {
  test.each([
    ['connector.example:8443', 'http://connector.example:8443'],
    ['Connector.Example', 'http://connector.example'],
    ['signage_connector:3000', 'http://signage_connector:3000'],
    ['10.1.2.3:3000', 'http://10.1.2.3:3000'],
    ['[::1]:3000', 'http://[::1]:3000'],
    ['connector.example:80', 'http://connector.example'],
  ])('Host %p → %p in all three places', async (host, expected) => {
    const urls = await baseUrlsFor(host);
    expect([urls.manifest, urls.servers, urls.link.slice(1, expected.length + 1)]).toEqual([expected, expected, expected]);
  });
});

test('no Host at all (HTTP/1.0) → localhost:<port>', async () => {
  const socket = connect(port, '127.0.0.1');
  socket.write('GET /v1/manifest HTTP/1.0\r\n\r\n');
  let raw = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (raw += chunk));
  await new Promise((resolve) => socket.on('end', resolve));
  const body = JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)) as { baseUrl: string };
  expect(body.baseUrl).toBe(`http://localhost:${port}`);
});

describe('wellFormedHost', () => {
  test.each([
    'example.com',
    'example.com:1',
    'example.com:65535',
    'a.b.c.',
    'xn--bcher-kva.example',
    '192.168.0.1:80',
    '[2001:db8::1]',
    '[::ffff:127.0.0.1]:8080',
    'localhost',
  ])('%p is accepted', (host) => expect(wellFormedHost(host)).toBe(host));

  test.each([
    hostile,
    '',
    ':80',
    'example.com:',
    'example.com:0',
    'example.com:65536',
    'example.com:080',
    'example.com:8a',
    'example.com:80:80',
    '-example.com',
    'example-.com',
    'exa mple.com',
    'a..b',
    'exa%6dple.com',
    'example.com/x',
    'u@example.com',
    '999.1.1.1',
    '1.2.3',
    '[::1',
    '::1',
    '[fe80::1%25eth0]',
    '[not-ipv6]',
    `${'a'.repeat(64)}.example`,
    'example.com\\',
    undefined,
  ])('%p is refused', (host) => expect(wellFormedHost(host)).toBeNull());
});

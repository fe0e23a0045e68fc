import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { keys } from '../fixtures/catalog.js';

/**
 * The upstream body limit (32 MiB) is enforced while reading: a real local upstream streams
 * an endless chunked answer, and the connector must stop reading at the limit, answer 502
 * and not ask again.
 */

const MiB = 1024 * 1024;
const limit = 32 * MiB;

interface Attempt {
  /** Bytes the upstream managed to hand to the socket before the connector hung up. */
  sent: number;
  closed: boolean;
}

let upstream: Server;
let baseUrl = '';
let attempts: Attempt[] = [];
let answer: (res: ServerResponse, attempt: Attempt) => void = () => undefined;
const apps: TestApp[] = [];

/** Writes `total` bytes of JSON-looking filler in 64 KiB chunks, honouring backpressure. */
function stream(res: ServerResponse, attempt: Attempt, total: number): void {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write('{"id":"');
  const pump = () => {
    while (attempt.sent < total && !attempt.closed) {
      attempt.sent += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (!attempt.closed) res.end('"}');
  };
  pump();
}

beforeAll(async () => {
  upstream = createServer((req, res) => {
    const attempt: Attempt = { sent: 0, closed: false };
    attempts.push(attempt);
    res.on('close', () => (attempt.closed = true));
    answer(res, attempt);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
  attempts = [];
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

async function connector(): Promise<TestApp> {
  const t = await buildTestApp({ env: { DEVICE_API_URL: baseUrl, UPSTREAM_TIMEOUT_MS: '20000', UPSTREAM_RETRIES: '2' } });
  apps.push(t);
  return t;
}

describe('an upstream answer over 32 MiB', () => {
  test('streamed (chunked, 256 MiB): reading stops at the limit, 502, one attempt, no retry', async () => {
    answer = (res, attempt) => stream(res, attempt, 256 * MiB);
    const t = await connector();
    const started = Date.now();
    const res = await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${keys.ana}`);
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ message: 'Upstream unavailable' });
    expect(attempts).toHaveLength(1);
    // The connector hung up near the limit: the upstream got to send the limit plus what
    // socket buffers hold, far from the 256 MiB it had.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(attempts[0]!.closed).toBe(true);
    expect(attempts[0]!.sent).toBeGreaterThan(limit - MiB);
    expect(attempts[0]!.sent).toBeLessThan(limit + 16 * MiB);
    expect(Date.now() - started).toBeLessThan(10_000);
  }, 30_000);

  test('declared (Content-Length over the limit): refused before reading, 502, one attempt', async () => {
    answer = (res, attempt) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(limit + 1) });
      attempt.sent = 1;
      res.write('{');
    };
    const t = await connector();
    const res = await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`);
    expect(res.status).toBe(502);
    expect(res.body).toEqual({ message: 'Upstream unavailable' });
    expect(attempts).toHaveLength(1);
  });

  test('an answer just under the limit is still read (and judged by its content)', async () => {
    answer = (res, attempt) => stream(res, attempt, 4 * MiB);
    const t = await connector();
    const res = await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${keys.ana}`);
    // Read in full: valid JSON that is not a device, so a 502 without retry from validation.
    expect(res.status).toBe(502);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]!.sent).toBe(4 * MiB);
  });
});

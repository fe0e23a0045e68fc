import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { keys } from '../fixtures/catalog.js';
import { upstreamDevice } from '../fixtures/upstream-device.js';

/**
 * Compressed upstream answers (docs/upstream.md): the connector asks for gzip, deflate or br, as
 * a browser's fetch does, and reads what a real local upstream sends in any of them, or plain;
 * the body limit counts the bytes once decoded.
 */
const device = upstreamDevice;
const page = JSON.stringify({ total: 1, data: [device] });
const encoders: Record<string, (b: Buffer) => Buffer> = { gzip: gzipSync, deflate: deflateSync, br: brotliCompressSync };

let upstream: Server;
let baseUrl = '';
let encoding = 'identity';
let body = page;
/** The encoded answer, made before the request when it is big (its encoding would eat into the client's timeout). */
let ready: Buffer | null = null;
const asked: IncomingHttpHeaders[] = [];
const apps: TestApp[] = [];

beforeAll(async () => {
  upstream = createServer((req, res) => {
    asked.push(req.headers);
    const raw = Buffer.from(body);
    const sent = ready ?? (encoding === 'identity' ? raw : encoders[encoding]!(raw));
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(encoding === 'identity' ? {} : { 'content-encoding': encoding }),
      'content-length': sent.length,
    });
    res.end(sent);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
});

afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
  asked.length = 0;
  body = page;
  ready = null;
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise<void>((resolve) => upstream.close(() => resolve()));
});

async function devices(): Promise<request.Response> {
  const t = await buildTestApp({ env: { DEVICE_API_URL: baseUrl, UPSTREAM_RETRIES: '0', DEVICE_CACHE_TTL_MS: '0' } });
  apps.push(t);
  return request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`);
}

describe('compressed upstream answers', () => {
  test.each(['identity', 'gzip', 'deflate', 'br'])('%s: the devices are read', async (name) => {
    encoding = name;
    const res = await devices();
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0].id).toBe(upstreamDevice.id);
    expect(asked[0]!['accept-encoding']).toBe('gzip, deflate, br');
  });

  test('a compressed answer past the limit once decoded is 502, whatever its compressed size', async () => {
    encoding = 'gzip';
    // 40 MiB of spaces inside the JSON: about 40 KB compressed.
    body = `{"total":1,"data":[${JSON.stringify(device)}],"pad":"${' '.repeat(40 * 1024 * 1024)}"}`;
    // Compressed before the request: on a loaded machine compressing 40 MiB in the handler took
    // longer than UPSTREAM_TIMEOUT_MS, and the answer was a 504 instead.
    ready = encoders.gzip!(Buffer.from(body));
    const res = await devices();
    expect(res.status).toBe(502);
    expect(asked).toHaveLength(1);
  });
});

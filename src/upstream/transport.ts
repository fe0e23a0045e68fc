import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { BodyTooLargeError, discard, readLimited } from './body.js';

/** One upstream answer, its body read whole (up to the limit). */
export interface TransportAnswer {
  status: number;
  header(name: string): string | null;
  text: string;
  /** Bytes read (after any content decoding). */
  bytes: number;
}

/**
 * One GET: resolves with the answer, its body read up to `limit` bytes (BodyTooLargeError past
 * it); rejects with an error named `AbortError` when `signal` aborts (a timeout, or the caller's
 * stop), else with the network error (its `code`, such as ECONNREFUSED, on it or its `cause`).
 * `answered` is called when the answer's status and headers arrive, before its body.
 */
export type Transport = (url: string, headers: Record<string, string>, signal: AbortSignal, limit: number, answered: () => void) => Promise<TransportAnswer>;

/** What fetch sends when not told: the upstream may compress its answers. */
const acceptEncoding = 'gzip, deflate, br';

/**
 * The upstream calls over node:http(s) with keep-alive agents of their own: a poll's listing
 * costs half the CPU time of a fetch (undici's web streams, Request and Headers objects). The
 * body is decoded (gzip, deflate, br) as fetch does, and never held past the limit.
 */
export function httpTransport(): Transport {
  const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };
  return (url, headers, signal, limit, answered) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === 'https:';
      let response: http.IncomingMessage | null = null;
      let settled = false;
      const fail = (err: Error) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener('abort', onAbort);
        req.destroy();
        response?.destroy();
        reject(err);
      };
      const onAbort = () => fail(Object.assign(new Error('The operation was aborted'), { name: 'AbortError' }));
      const req = (secure ? https : http).request(
        target,
        { method: 'GET', agent: secure ? agents['https:'] : agents['http:'], headers: { 'accept-encoding': acceptEncoding, ...headers } },
        (res) => {
          response = res;
          answered();
          const declared = Number(res.headers['content-length'] ?? 0);
          if (declared > limit) return fail(new BodyTooLargeError(limit));
          readBody(decoded(res), limit).then(
            ({ text, bytes }) => {
              if (settled) return;
              settled = true;
              signal.removeEventListener('abort', onAbort);
              resolve({ status: res.statusCode ?? 0, header: (name) => headerOf(res, name), text, bytes });
            },
            (err: Error) => fail(err),
          );
        },
      );
      req.on('error', fail);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      req.end();
    });
}

/** The same over a fetch (an injected one, in tests). */
export function fetchTransport(doFetch: typeof fetch): Transport {
  return async (url, headers, signal, limit, answered) => {
    const response = await doFetch(url, { headers, redirect: 'manual', signal });
    answered();
    try {
      const { text, bytes } = await readLimited(response, limit);
      return { status: response.status, header: (name) => response.headers.get(name), text, bytes };
    } catch (err) {
      discard(response);
      throw err;
    }
  };
}

function headerOf(res: http.IncomingMessage, name: string): string | null {
  const value = res.headers[name.toLowerCase()];
  return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
}

/** The body as sent, decoded when the upstream compressed it. */
function decoded(res: http.IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decoder =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : null;
  if (!decoder) return res;
  res.on('error', (err) => decoder.destroy(err));
  return res.pipe(decoder);
}

/** Reads a body up to `limit` bytes: past it, the stream is destroyed (the upstream stops sending). */
function readBody(body: Readable, limit: number): Promise<{ text: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    body.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        body.destroy();
        reject(new BodyTooLargeError(limit));
        return;
      }
      chunks.push(chunk);
    });
    body.on('end', () => resolve({ text: Buffer.concat(chunks, bytes).toString('utf8'), bytes }));
    body.on('error', reject);
    // A connection cut mid-body: 'aborted' on the response, then 'close' without 'end'.
    body.on('close', () => reject(Object.assign(new Error('the upstream closed the connection mid-answer'), { code: 'ECONNRESET' })));
  });
}

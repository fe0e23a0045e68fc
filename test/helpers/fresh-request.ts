import { request as httpRequest } from 'node:http';

type Json = any; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface FreshRequest {
  method?: string;
  headers?: Record<string, string>;
  /** Sent as JSON. */
  body?: unknown;
}

/**
 * One request on a fresh connection (no keep-alive pool shared between processes, so a
 * process stopping or restarting never meets a reused socket). Resolves with the status and
 * the JSON body; rejects with the socket's error when the connection is cut (`ECONNRESET`).
 */
export function freshRequest(url: string, options: FreshRequest = {}): Promise<{ status: number; body: Json }> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', agent: false, headers: { ...options.headers, ...(payload ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, body: text ? JSON.parse(text) : null }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { parseRetryAfter } from '../time/retry-after.js';
import { guardedLookup, permittedAddresses, targetUrlProblem, type TargetPolicy } from './target-guard.js';

export interface SendResult {
  /** HTTP status, or null when no response arrived (timeout, network error, refused target). */
  status: number | null;
  error: string | null;
  retryAfterMs?: number;
  durationMs: number;
  /** The first `responseExcerptBytes` of the answer's body, as UTF-8 text (null: no answer). */
  responseBody?: string | null;
  /** Every request header sent (the signature included, never the secret). */
  requestHeaders?: Record<string, string>;
}

/** How much of an answer's body is kept in the attempt log. */
export const responseExcerptBytes = 1024;

export type WebhookSender = (url: string, body: string, headers: Record<string, string>) => Promise<SendResult>;

/**
 * POSTs one delivery. Never follows redirects; gives up after `timeoutMs`; reads at most
 * 64 KiB of the answer; never throws (failures come back as `status: null` + `error`).
 * The target policy is applied again here, to the addresses the socket connects to.
 */
export function httpWebhookSender(timeoutMs: number, policy: TargetPolicy): WebhookSender {
  return (url, body, headers) =>
    new Promise((resolve) => {
      const started = performance.now();
      const done = (result: Omit<SendResult, 'durationMs'>) => resolve({ ...result, durationMs: Math.round(performance.now() - started) });
      const problem = targetUrlProblem(url, policy);
      if (problem) return done({ status: null, error: problem });
      const target = new URL(url);
      const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
      const requestHeaders = {
        ...headers,
        'content-type': 'application/json',
        'content-length': String(Buffer.byteLength(body)),
        'user-agent': 'signage-connector-webhooks',
      };
      const req = send(
        target,
        {
          method: 'POST',
          lookup: guardedLookup(permittedAddresses(policy, target)),
          headers: requestHeaders,
          timeout: timeoutMs,
        },
        (res) => {
          let read = 0;
          const kept: Buffer[] = [];
          res.on('data', (chunk: Buffer) => {
            if (read < responseExcerptBytes) kept.push(chunk.subarray(0, responseExcerptBytes - read));
            read += chunk.length;
            if (read > 64 * 1024) res.destroy();
          });
          const finish = () =>
            done({
              status: res.statusCode ?? null,
              error: null,
              retryAfterMs: parseRetryAfter(res.headers['retry-after'], Date.now()),
              // Cut at a byte count: a character split at the end shows as U+FFFD.
              responseBody: Buffer.concat(kept).toString('utf8'),
              requestHeaders,
            });
          res.on('end', finish);
          res.on('close', finish);
        },
      );
      const timer = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
      req.on('error', (err) => done({ status: null, error: err.message, requestHeaders }));
      req.on('close', () => clearTimeout(timer));
      req.end(body);
    });
}

import pRetry, { AbortError } from 'p-retry';
import type { Logger } from 'pino';
import type { z } from 'zod';
import { AppError } from '../errors.js';
import type { Clock } from '../time/timestamps.js';
import { parseRetryAfter } from '../time/retry-after.js';
import type { Metrics, UpstreamOutcome } from '../metrics/metrics.js';
import { outcomeOf, statusOutcome, tagged } from '../metrics/upstream-outcome.js';
import { collectRejected } from './rejected.js';
import { RejectedLog, rejectedLogMaxRecords } from './rejected-log.js';
import { BodyTooLargeError, discard } from './body.js';
import { fetchTransport, httpTransport, type Transport, type TransportAnswer } from './transport.js';

export interface UpstreamClientOptions {
  /** Base URL without a trailing slash. */
  baseUrl: string;
  /** Which area, for logs and the auth header: `device` → Bearer, `menu` → X-API-Key. */
  area: 'device' | 'menu';
  timeoutMs: number;
  retries: number;
  logger: Logger;
  clock: Clock;
  /** Injected for tests; by default the calls go over node:http(s) with keep-alive (transport.ts). */
  fetch?: typeof fetch;
  /** Base of the exponential backoff between attempts (default 100 ms). */
  backoffMs?: number;
  /** Counts and times every attempt by outcome. */
  metrics?: Metrics;
  /** Largest answer read, in bytes (default 32 MiB); a longer one is a 502, not retried. */
  maxBodyBytes?: number;
}

export interface UpstreamRequest<T> {
  /**
   * A route pattern such as `/devices/:id`, filled in from `params` (percent-encoded). Logs
   * show only the pattern: an id may be anything a user typed, a pasted key included.
   */
  path: string;
  params?: Record<string, string>;
  query?: Record<string, string | undefined>;
  key: string;
  requestId: string;
  /** Sent as `X-Forwarded-For`: the caller's address (chain); absent for background work. */
  forwardedFor?: string;
  /**
   * The caller's work was stopped (a background poll at shutdown): the attempt under way is
   * aborted, no other is made, and the call rejects with the signal's reason.
   */
  signal?: AbortSignal;
  schema: z.ZodType<T, unknown>;
  /**
   * A hand-checked parse of the common case (fast-devices.ts): what `schema` would return, or
   * undefined whenever anything is off, and `schema` judges the answer then.
   */
  fast?: (json: unknown) => T | undefined;
}

export interface UpstreamResponse<T> {
  data: T;
  bytes: number;
}

const defaultMaxBodyBytes = 32 * 1024 * 1024;

/** A failed attempt that may be retried, with the upstream's Retry-After if it sent one. */
class RetryableError extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'unavailable',
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/**
 * The one HTTP client for upstream calls. Contract:
 * - each attempt has its own timeout (`timeoutMs`); `retries` more attempts follow network
 *   errors, timeouts, 5xx and 429 only, with exponential backoff, waiting at least the
 *   upstream's `Retry-After` (a Retry-After longer than the timeout is not waited for);
 * - every attempt carries the same `X-Request-Id` and `X-Forwarded-For`; the key is sent as
 *   the area's header;
 * - a body is read up to `maxBodyBytes` and no further: a longer one is cancelled mid-stream
 *   and is 502 `Upstream unavailable` at once (never retried);
 * - 401/403/404 (and 400) are relayed as AppErrors with the upstream's `message`;
 * - a 2xx body that is not JSON or does not match `schema` is 502 `Upstream unavailable`
 *   (logged with what did not match); exhausted retries are 502, or 504 when the last
 *   attempt timed out;
 * - a caller's `signal` that aborts ends the call at once with its reason: no retry, no
 *   failed-attempt log line or metric (nothing failed upstream).
 */
export class UpstreamClient {
  private lastAnswerAt = -Infinity;
  private readonly rejectedLog: RejectedLog;
  private readonly transport: Transport;

  constructor(private readonly options: UpstreamClientOptions) {
    this.rejectedLog = new RejectedLog(options.clock);
    this.transport = options.fetch ? fetchTransport(options.fetch) : httpTransport();
  }

  /** Milliseconds since the upstream last answered anything (even an error status). */
  sinceLastAnswer(): number {
    return this.options.clock.now() - this.lastAnswerAt;
  }

  /** Whether the upstream answers at all (any HTTP status) within one timeout. */
  async probe(path: string): Promise<boolean> {
    try {
      const doFetch = this.options.fetch ?? fetch;
      const response = await doFetch(`${this.options.baseUrl}${path}`, {
        redirect: 'manual',
        signal: AbortSignal.timeout(this.options.timeoutMs),
      });
      discard(response);
      this.lastAnswerAt = this.options.clock.now();
      return true;
    } catch {
      return false;
    }
  }

  async get<T>(request: UpstreamRequest<T>): Promise<UpstreamResponse<T>> {
    const url = this.url(request);
    const { retries, backoffMs = 100, logger } = this.options;
    const { signal } = request;
    try {
      return await pRetry(() => this.measuredAttempt(url, request), {
        signal,
        retries,
        minTimeout: backoffMs,
        factor: 2,
        randomize: true,
        onFailedAttempt: async ({ error, attemptNumber, retriesLeft }) => {
          logger.warn(
            { area: this.options.area, route: request.path, attempt: attemptNumber, retriesLeft, error: error.message, requestId: request.requestId },
            'upstream attempt failed',
          );
          const wait = error instanceof RetryableError ? error.retryAfterMs : undefined;
          if (wait !== undefined && retriesLeft > 0) await sleep(wait, signal);
        },
      });
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      if (err instanceof AppError) throw err;
      if (err instanceof RetryableError && err.kind === 'timeout') throw new AppError('upstream_timeout', 'Upstream timeout');
      throw new AppError('upstream_unavailable', 'Upstream unavailable');
    }
  }

  /** One attempt, counted by the outcome its error is tagged with (none = ok). */
  private async measuredAttempt<T>(url: string, request: UpstreamRequest<T>): Promise<UpstreamResponse<T>> {
    const started = performance.now();
    let outcome: UpstreamOutcome = 'ok';
    try {
      return await this.attempt(url, request);
    } catch (err) {
      outcome = outcomeOf(err);
      throw err;
    } finally {
      if (!request.signal?.aborted) this.options.metrics?.upstreamAttempt(this.options.area, outcome, (performance.now() - started) / 1000);
    }
  }

  /** One attempt: AppError (final) or RetryableError (worth another try). */
  private async attempt<T>(url: string, request: UpstreamRequest<T>): Promise<UpstreamResponse<T>> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'x-request-id': request.requestId,
      'user-agent': 'signage-connector',
    };
    if (this.options.area === 'device') headers.authorization = `Bearer ${request.key}`;
    else headers['x-api-key'] = request.key;
    if (request.forwardedFor) headers['x-forwarded-for'] = request.forwardedFor;
    let response: TransportAnswer;
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const signal = request.signal ? AbortSignal.any([timeout, request.signal]) : timeout;
      const answered = () => (this.lastAnswerAt = this.options.clock.now());
      response = await this.transport(url, headers, signal, this.options.maxBodyBytes ?? defaultMaxBodyBytes, answered);
    } catch (err) {
      // Stopped by the caller: no further attempt (pRetry rethrows the original error).
      if (request.signal?.aborted) throw new AbortError(err as Error);
      if (err instanceof BodyTooLargeError) {
        this.options.logger.warn({ area: this.options.area, route: request.path, limit: err.limit, requestId: request.requestId }, 'upstream body too large');
        throw tagged(new AbortError(new AppError('upstream_unavailable', 'Upstream unavailable')), 'too_large');
      }
      const name = (err as Error).name;
      if (name === 'TimeoutError' || name === 'AbortError') throw tagged(new RetryableError('timed out', 'timeout'), 'timeout');
      // The code (ECONNREFUSED…), not the message: messages of URL errors carry the URL.
      const code = ((err as { code?: unknown }).code ?? (err as { cause?: { code?: unknown } }).cause?.code ?? name) as string;
      throw tagged(new RetryableError(`network error: ${code}`, 'unavailable'), 'network');
    }
    const { text, bytes } = response;
    if (response.status === 429 || response.status >= 500) {
      const retryAfterMs = parseRetryAfter(response.header('retry-after'), this.options.clock.now());
      if (retryAfterMs !== undefined && retryAfterMs > this.options.timeoutMs) {
        throw tagged(
          new AbortError(
            new AppError('upstream_unavailable', 'Upstream unavailable', undefined, {
              'Retry-After': String(Math.ceil(retryAfterMs / 1000)),
            }),
          ),
          statusOutcome(response.status),
        );
      }
      throw tagged(new RetryableError(`status ${response.status}`, 'unavailable', retryAfterMs), statusOutcome(response.status));
    }
    if (response.status < 200 || response.status >= 300) throw tagged(new AbortError(this.relayed(response.status, text)), statusOutcome(response.status));
    return { data: this.validate(text, request), bytes };
  }

  private relayed(status: number, text: string): AppError {
    const message = upstreamMessage(text);
    if (status === 401) return new AppError('invalid_key', message ?? 'Invalid API key');
    if (status === 403) return new AppError('invalid_scopes', message ?? 'Invalid scopes');
    if (status === 404) return new AppError('not_found', message ?? 'Not found');
    if (status === 400) return new AppError('validation', message ?? 'Invalid request');
    this.options.logger.warn({ area: this.options.area, status }, 'unexpected upstream status');
    return new AppError('upstream_unavailable', 'Upstream unavailable');
  }

  private validate<T>(text: string, request: UpstreamRequest<T>): T {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      this.options.logger.warn({ area: this.options.area, route: request.path, requestId: request.requestId }, 'upstream body is not JSON');
      throw tagged(new AbortError(new AppError('upstream_unavailable', 'Upstream unavailable')), 'invalid_body');
    }
    const quick = request.fast?.(json);
    if (quick !== undefined) return quick;
    const { result: parsed, rejected } = collectRejected(() => request.schema.safeParse(json));
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`);
      this.options.logger.warn(
        { area: this.options.area, route: request.path, issues, requestId: request.requestId },
        'upstream body does not match the interface',
      );
      throw tagged(new AbortError(new AppError('upstream_unavailable', 'Upstream unavailable')), 'invalid_body');
    }
    const { area, logger } = this.options;
    let unlogged = 0;
    for (const record of rejected) {
      this.options.metrics?.upstreamRecordRejected(area, record.resource);
      const verdict = this.rejectedLog.decide({ area, ...record });
      if (verdict === 'full') unlogged += 1;
      if (verdict !== 'log') continue;
      logger.warn(
        { area, route: request.path, resource: record.resource, id: record.id, field: record.field, problem: record.message, requestId: request.requestId },
        'upstream record does not match the interface; left out of the answer',
      );
    }
    if (unlogged > 0 && this.rejectedLog.fullLineDue()) {
      logger.warn(
        { area, route: request.path, unlogged, limit: rejectedLogMaxRecords, requestId: request.requestId },
        'more invalid upstream records than are logged one by one; the rest are only counted in upstream_records_rejected_total',
      );
    }
    return parsed.data;
  }

  private url({ path, params = {}, query = {} }: UpstreamRequest<unknown>): string {
    const filled = path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
      const value = params[name];
      if (value === undefined) throw new Error(`no value for :${name} in ${path}`);
      return encodeURIComponent(value);
    });
    const search = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, value);
    const text = search.toString();
    return `${this.options.baseUrl}${filled}${text ? `?${text}` : ''}`;
  }
}

/** The upstream's `{"message": …}`, if its error body has one. */
function upstreamMessage(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    return typeof body.message === 'string' && body.message.length <= 500 ? body.message : undefined;
  } catch {
    return undefined;
  }
}

/** Waits `ms`, or less when `signal` aborts (pRetry then ends the call). */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

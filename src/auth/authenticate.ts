import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { AppError, type ErrorDetail } from '../errors.js';
import type { Principal } from './principal.js';
import type { KeyVerifier } from './embedded-keys.js';
import type { Attempt, FailedAttempts } from './failed-attempts.js';
import { clientAddress } from './client-address.js';
import { hashKey, isWellFormedKey } from './keys.js';
import { forwardedFor } from './forwarded-for.js';
import type { KeyLimits } from './key-limits.js';
import { waitsOf, type RequestWaits } from '../db/wait-budget.js';

export type Scope = 'device:read' | 'menu:read' | 'hooks:write';

/** Where a key may be presented (docs/api.md). */
export type KeyHeaders = 'bearer' | 'x-api-key' | 'either';

export interface AuthOptions {
  headers: KeyHeaders;
  scope?: Scope;
  verify: KeyVerifier;
  attempts: FailedAttempts;
  /** The per-key rate limit and record of use, applied to every request whose key is good. */
  limits?: KeyLimits;
}

/** The refusals of a key that count as a failed attempt: unknown, and known but expired or revoked. */
const refusedKey = new Set(['invalid_key', 'expired_key', 'revoked_key']);

/** A 403 that names the scope the key lacks (docs/api.md). */
export function missingScope(scope: Scope): AppError {
  return new AppError('invalid_scopes', 'Invalid scopes', [{ path: 'scope', message: `needs ${scope}` }]);
}

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    /** What a rejection of the key found after authentication (an upstream 401) must update. */
    rejectionContext?: { challenge: Record<string, string> | undefined; attempt: Attempt | null };
  }
}

export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer[ ]+(.*)$/i.exec(header);
  const token = match?.[1]?.trim();
  return token ? token : undefined;
}

function presentedKey(req: Request, headers: KeyHeaders): string | undefined {
  const apiKey = headers === 'bearer' ? undefined : req.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return apiKey;
  return headers === 'x-api-key' ? undefined : bearerToken(req);
}

/**
 * Why no key was found, when the request did send one somewhere this route does not read it
 * (docs/api.md): the other area's header, or an Authorization header that is not `Bearer <key>`.
 */
function missingKeyHint(req: Request, headers: KeyHeaders): ErrorDetail[] | undefined {
  const apiKey = req.headers['x-api-key'];
  const authorization = req.headers.authorization;
  if (headers === 'bearer' && typeof apiKey === 'string' && apiKey !== '') {
    return [
      { path: 'Authorization', message: 'The device area reads the key from the Authorization header as "Bearer <key>"; X-API-Key is read only under /v1' },
    ];
  }
  if (headers === 'x-api-key' && bearerToken(req) !== undefined) {
    return [
      {
        path: 'X-API-Key',
        message: 'This route reads the key from the X-API-Key header; Authorization: Bearer is read only by /devices and the device-data routes under /v1',
      },
    ];
  }
  if (headers !== 'x-api-key' && authorization) {
    return [{ path: 'Authorization', message: 'The Authorization header must be "Bearer <key>"' }];
  }
  return undefined;
}

/**
 * Authenticates the request and checks its scope. Order matters: a client over the
 * failed-attempt limit is refused before its key is even looked at; a malformed key is
 * rejected without any database or upstream look-up. Scopes are checked only where the
 * connector knows them (`scopes: null` = an upstream decides).
 */
export function authenticate(options: AuthOptions): RequestHandler {
  const challenge = options.headers === 'bearer' ? { 'WWW-Authenticate': 'Bearer' } : undefined;
  const { verify } = options;
  // A key verified moments ago (the hot path: a dropdown's repeated requests) is served
  // without an await: no look-up, no attempt, nothing to wait for but its rate limit's
  // reservation, when that is due.
  return (req, res, next) => {
    // The socket's peer, or behind TRUST_PROXY the nearest untrusted hop.
    const client = clientAddress(req);
    const retryAfter = options.attempts.retryAfterSeconds(client);
    if (retryAfter > 0) throw tooMany(retryAfter);
    const key = presentedKey(req, options.headers);
    if (key === undefined) throw new AppError('missing_key', 'Missing API key', missingKeyHint(req, options.headers), challenge);
    const wellFormed = isWellFormedKey(key);
    const keyHash = hashKey(key);
    const verified = wellFormed ? verify.cached?.(keyHash) : undefined;
    if (verified) return admit(req, res, next, options, principalFor(req, verified, key), null, challenge);
    return lookUp(req, res, next, options, challenge, client, key, keyHash, wellFormed);
  };
}

function tooMany(seconds: number): AppError {
  return new AppError('rate_limited', 'Too many requests', undefined, { 'Retry-After': String(seconds) });
}

/**
 * The request's principal: the verified key, with what of the request travels upstream.
 * Written out field by field: on Node.js 20 a spread followed by more fields
 * (`{ ...verified, key }`) takes a slow path, about 5 µs a request (measured).
 */
function principalFor(req: Request, verified: Omit<Principal, 'key'>, key: string): Principal {
  return {
    keyHash: verified.keyHash,
    key,
    scopes: verified.scopes,
    keyId: verified.keyId,
    keyName: verified.keyName,
    userId: verified.userId,
    accountId: verified.accountId,
    accountName: verified.accountName,
    rateLimitPerMinute: verified.rateLimitPerMinute,
    requestId: req.id,
    // Only upstream calls carry the caller's address (scopes null = an upstream decides).
    forwardedFor: verified.scopes === null ? forwardedFor(req) : undefined,
    signal: verified.signal,
  };
}

/** A key to look up (or to send upstream): counted as an attempt first unless it is no guess. */
async function lookUp(
  req: Request,
  res: Response,
  next: NextFunction,
  options: AuthOptions,
  challenge: Record<string, string> | undefined,
  client: string,
  key: string,
  keyHash: string,
  wellFormed: boolean,
): Promise<void> {
  // A key verified moments ago is no guess; any other key is an attempt, counted before it
  // is looked up or sent upstream.
  let attempt: Attempt | null = null;
  if (!wellFormed || !options.verify.isKnownGood?.(keyHash)) {
    const begun = await options.attempts.begin(client, keyHash, waitsOf(res));
    if ('retryAfterSeconds' in begun) throw tooMany(begun.retryAfterSeconds);
    attempt = begun;
  }
  let principal: Principal;
  try {
    if (!wellFormed) throw new AppError('invalid_key', 'Invalid API key');
    principal = principalFor(req, await options.verify(key, keyHash, waitsOf(res)), key);
  } catch (err) {
    if (err instanceof AppError && refusedKey.has(err.code)) {
      // A key known good until now (revoked or expired since, or refused upstream) counts once it fails.
      attempt ??= await lateAttempt(options.attempts, client, keyHash, waitsOf(res));
      attempt?.failed();
      throw new AppError(err.code, err.message, undefined, challenge);
    }
    throw err;
  }
  // Upstream mode learns whether the key is good from the upstream's answer; embedded keys
  // are known good already.
  if (attempt && principal.scopes !== null) await attempt.succeeded();
  else if (attempt) settleWithResponse(res, attempt);
  await admit(req, res, next, options, principal, attempt, challenge);
}

/** A good key: its rate limit (on every answer to it, a refusal of its scope included), then its scope. */
function admit(
  req: Request,
  res: Response,
  next: NextFunction,
  options: AuthOptions,
  principal: Principal,
  attempt: Attempt | null,
  challenge: Record<string, string> | undefined,
): void | Promise<void> {
  const limited = options.limits?.(principal, res);
  if (limited) return limited.then(() => admitted(req, next, options, principal, attempt, challenge));
  admitted(req, next, options, principal, attempt, challenge);
}

function admitted(
  req: Request,
  next: NextFunction,
  options: AuthOptions,
  principal: Principal,
  attempt: Attempt | null,
  challenge: Record<string, string> | undefined,
): void {
  if (options.scope && principal.scopes && !principal.scopes.has(options.scope)) throw missingScope(options.scope);
  req.principal = principal;
  req.rejectionContext = { challenge, attempt: principal.scopes === null ? attempt : null };
  next();
}

/** The attempt of a key that was known good when its request began; null when the client is already over the limit. */
async function lateAttempt(attempts: FailedAttempts, client: string, keyHash: string, waits: RequestWaits): Promise<Attempt | null> {
  const begun = await attempts.begin(client, keyHash, waits);
  return 'retryAfterSeconds' in begun ? null : begun;
}

/**
 * Upstream mode: an attempt with a key the connector cannot judge is settled by the answer:
 * anything but a 401 means the upstream accepted the key, and the attempt stops counting.
 */
function settleWithResponse(res: Response, attempt: Attempt): void {
  res.once('finish', () => {
    if (res.statusCode !== 401) void attempt.succeeded().catch(() => undefined);
  });
}

/**
 * Upstream mode learns that a key is bad only when the upstream answers 401, after this
 * middleware let the request through. The attempt, counted when it started, stays counted
 * (so guessing keys is rate-limited here, not at the upstream), and the 401 carries the same
 * challenge header as a locally refused key.
 */
export const upstreamRejection: ErrorRequestHandler = (err, req, _res, next) => {
  const context = req.rejectionContext;
  if (err instanceof AppError && err.code === 'invalid_key' && context) {
    context.attempt?.failed();
    const challenge = context.challenge;
    next(challenge ? new AppError('invalid_key', err.message, undefined, challenge) : err);
    return;
  }
  next(err);
};

/** The authenticated principal of a route that ran `authenticate`. */
export function principalOf(req: Request): Principal {
  if (!req.principal) throw new Error('route is missing authenticate()');
  return req.principal;
}

/**
 * Upstream mode: the connector's own state (events, hooks) is served only to a key the
 * device upstream currently accepts; its 401/403 is relayed. Embedded keys pass through.
 */
export function confirmDeviceKey(services: { confirmDeviceKey(principal: Principal): Promise<void> }): RequestHandler {
  return async (req, _res, next) => {
    await services.confirmDeviceKey(principalOf(req));
    next();
  };
}

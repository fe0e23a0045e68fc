import type { ErrorRequestHandler, Request, RequestHandler } from 'express';
import { AppError } from '../errors.js';
import type { Principal } from '../sources/types.js';
import type { KeyVerifier } from './embedded-keys.js';
import type { FailedAttempts } from './failed-attempts.js';
import { isWellFormedKey } from './keys.js';

export type Scope = 'device:read' | 'menu:read' | 'hooks:write';

/** Where a key may be presented (CONTRACT 2). */
export type KeyHeaders = 'bearer' | 'x-api-key' | 'either';

export interface AuthOptions {
  headers: KeyHeaders;
  scope?: Scope;
  verify: KeyVerifier;
  attempts: FailedAttempts;
}

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    /** What a rejection of the key found after authentication (an upstream 401) must update. */
    rejectionContext?: { client: string; challenge: Record<string, string> | undefined; attempts: FailedAttempts };
  }
}

function bearerToken(req: Request): string | undefined {
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
 * Authenticates the request and checks its scope. Order matters: a client over the
 * failed-attempt limit is refused before its key is even looked at; a malformed key is
 * rejected without any database or upstream look-up. Scopes are checked only where the
 * connector knows them (`scopes: null` = an upstream decides).
 */
export function authenticate(options: AuthOptions): RequestHandler {
  const challenge = options.headers === 'bearer' ? { 'WWW-Authenticate': 'Bearer' } : undefined;
  return async (req, _res, next) => {
    // The socket address (trust proxy is off, so req.ip would parse its way to the same value).
    const client = req.socket.remoteAddress ?? 'unknown';
    const retryAfter = options.attempts.retryAfterSeconds(client);
    if (retryAfter > 0) {
      throw new AppError('rate_limited', 'Too many requests', undefined, { 'Retry-After': String(retryAfter) });
    }
    const key = presentedKey(req, options.headers);
    if (key === undefined) throw new AppError('missing_key', 'Missing API key', undefined, challenge);
    let principal: Principal;
    try {
      if (!isWellFormedKey(key)) throw new AppError('invalid_key', 'Invalid API key');
      principal = { ...(await options.verify(key)), requestId: req.id };
    } catch (err) {
      if (err instanceof AppError && err.code === 'invalid_key') {
        options.attempts.recordFailure(client);
        throw new AppError('invalid_key', err.message, undefined, challenge);
      }
      throw err;
    }
    if (options.scope && principal.scopes && !principal.scopes.has(options.scope)) {
      throw new AppError('invalid_scopes', 'Invalid scopes');
    }
    req.principal = principal;
    req.rejectionContext = { client, challenge, attempts: options.attempts };
    next();
  };
}

/**
 * Upstream mode learns that a key is bad only when the upstream answers 401, after this
 * middleware let the request through. Such a 401 still counts as a failed attempt of the
 * client (so guessing keys is rate-limited here, not at the upstream) and carries the same
 * challenge header as a locally refused key.
 */
export const upstreamRejection: ErrorRequestHandler = (err, req, _res, next) => {
  const context = req.rejectionContext;
  if (err instanceof AppError && err.code === 'invalid_key' && context) {
    context.attempts.recordFailure(context.client);
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

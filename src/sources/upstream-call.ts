import type { CachedLoader } from '../cache/cached-loader.js';
import type { UpstreamResponse } from '../upstream/client.js';
import type { KeyVerdicts } from '../upstream/key-verdicts.js';
import type { Principal } from './types.js';

export type UpstreamCall = <T>(principal: Principal, cacheKey: string, load: () => Promise<UpstreamResponse<T>>) => Promise<T>;

/**
 * Wraps upstream loads for a source: a 401 is remembered for the key, and with a cache the
 * answer is kept per key hash + `cacheKey` (single-flight, stale-while-revalidate, stale-if-error).
 */
export function upstreamCall(verdicts: KeyVerdicts, cache?: CachedLoader): UpstreamCall {
  return async (principal, cacheKey, load) => {
    const call = () =>
      verdicts.watch(principal.keyHash, async () => {
        const { data, bytes } = await load();
        return { value: data, size: bytes };
      });
    if (!cache) return (await call()).value;
    return (await cache.get(`${principal.keyHash}|${cacheKey}`, call)).value;
  };
}

/**
 * What an upstream call carries about its caller: request id, X-Forwarded-For (none in
 * background work) and the signal that stops it (a background poll's).
 */
export function callerOf(principal: Principal): { requestId: string; forwardedFor?: string; signal?: AbortSignal } {
  return { requestId: principal.requestId ?? 'background', forwardedFor: principal.forwardedFor, signal: principal.signal };
}

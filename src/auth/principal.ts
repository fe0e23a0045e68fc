/** Who is asking. `scopes: null` means an upstream decides (upstream mode). */
export interface Principal {
  keyHash: string;
  /** The raw key, kept in memory only, to forward upstream. Never logged. */
  key: string;
  scopes: ReadonlySet<string> | null;
  keyId: string | null;
  keyName: string | null;
  userId: string | null;
  accountId: string | null;
  accountName: string | null;
  /** Embedded mode: the key's own rate limit (null or absent = RATE_LIMIT_PER_MINUTE; docs/keys.md). */
  rateLimitPerMinute?: number | null;
  /** The request this principal arrived with; forwarded upstream as `X-Request-Id`. */
  requestId?: string;
  /** Its caller's address (chain), forwarded upstream as `X-Forwarded-For`; unset in background work. */
  forwardedFor?: string;
  /**
   * Aborts upstream calls made for this principal when its work is stopped (a background poll
   * at shutdown). Only for uncached sources, as the poller's: a cached load may be shared by
   * other callers, whom one caller's stop must not fail.
   */
  signal?: AbortSignal;
}

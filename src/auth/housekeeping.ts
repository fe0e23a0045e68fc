import type { Logger } from 'pino';
import { intervalPart, type BackgroundPart } from '../background/lifecycle.js';
import type { Clock } from '../time/timestamps.js';
import type { FailedAttempts } from './failed-attempts.js';
import type { KeyUsage } from './key-usage.js';
import type { RateLimitBuckets } from './rate-limit-store.js';

/** How often this replica forgets ended failed-attempt windows and idle rate-limit buckets. */
const housekeepingMs = 60_000;

/**
 * The keys' housekeeping, once a minute on each replica: ended failed-attempt windows and idle
 * rate-limit buckets are forgotten, and the last minute's key uses written (docs/keys.md). A
 * failure (the database out of reach) is logged at debug and tried again next minute.
 */
export function keyHousekeeping(parts: {
  failedAttempts: FailedAttempts;
  rateLimits: Pick<RateLimitBuckets, 'prune'>;
  keyUsage: KeyUsage;
  clock: Clock;
  logger: Logger;
}): BackgroundPart {
  const { failedAttempts, rateLimits, keyUsage, clock, logger } = parts;
  return intervalPart('housekeeping', housekeepingMs, () => {
    const skipped = (err: unknown) => logger.debug({ err: (err as Error).message }, 'housekeeping skipped');
    void failedAttempts.prune().catch(skipped);
    void rateLimits.prune(clock.now()).catch(skipped);
    void keyUsage.flush();
  });
}

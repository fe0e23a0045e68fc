import type { Db } from '../../src/db/database.js';
import { systemClock } from '../../src/time/timestamps.js';

/**
 * Brings every watched key's poll time forward to now: the interval passing, which a bench on
 * the system clock does not sit through. The row then runs the poller's own loop until idle
 * (`services.poller.runUntilIdle()`: the same claim of due keys, lease, queue and concurrency
 * as when started), which polls each key once.
 */
export async function makeKeysDue(db: Db): Promise<void> {
  const now = systemClock.now();
  await db.kysely.updateTable('watches').set({ next_poll_at: now }).where('next_poll_at', '>', now).execute();
}

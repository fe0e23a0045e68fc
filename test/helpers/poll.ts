import type { PollResult } from '../../src/triggers/poller-options.js';
import type { TestApp } from './app.js';

/**
 * Polls as the background poller does once its keys fall due: the test clock is moved on to
 * the latest poll time of the watched keys (when it is not there already), then the poller's
 * own loop runs until idle (`runUntilIdle`: the same claim of due keys, lease, queue and
 * concurrency as when started), so every watched key is polled once.
 */
export async function pollDue(t: Pick<TestApp, 'clock' | 'services' | 'value'>): Promise<PollResult> {
  const due = await t.value<number | string | null>('SELECT MAX(next_poll_at) FROM watches WHERE paused_reason IS NULL');
  if (due !== null && due !== undefined && Number(due) > t.clock.now()) t.clock.ms = Number(due);
  return t.services.poller.runUntilIdle();
}

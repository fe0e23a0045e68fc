import { expect, test } from '@jest/globals';
import { setTimeout as sleep } from 'node:timers/promises';
import { PollPressure } from '../../src/background/poll-pressure.js';

/** Keeps the event loop busy (this thread's CPU) for `ms`. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

test('behind: a poll started late while the event loop was busy; not when it was idle, nor when the poll was on time', async () => {
  const pressure = new PollPressure(1_000);
  // Late, on a busy loop: behind.
  spin(300);
  pressure.pollStarted(5_000);
  expect(pressure.behind).toBe(true);
  // Just as late, the loop idle (the poller waits on a slow upstream, with CPU to spare): not behind.
  await sleep(300);
  pressure.pollStarted(5_000);
  expect(pressure.behind).toBe(false);
  // On time (within lagMs), the loop busy: not behind.
  spin(300);
  pressure.pollStarted(900);
  expect(pressure.behind).toBe(false);
});

import { afterEach, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { hashKey } from '../../src/auth/keys.js';
import { minPollGapShare, nextPollTime } from '../../src/triggers/poll-key.js';

/**
 * A key's poll times (docs/triggers.md): a background poll keeps the key's place in the
 * interval, its next poll an interval after it was due however late it ran, but never less
 * than 0.95 intervals after it asked the source. Injected clock, embedded mode.
 */
const intervalMs = 30_000;
const keyHash = hashKey(keys.ana);

let t: TestApp;
afterEach(async () => {
  const app = t;
  t = undefined as unknown as TestApp;
  await app?.close();
});

const nextPollAt = async () => Number(await t.value('SELECT next_poll_at FROM watches WHERE key_hash = ?', keyHash));

test('nextPollTime: an interval after the key was due, at least 0.95 intervals after the source was asked; a request’s poll an interval after it asked', () => {
  expect(nextPollTime(10_000, 1_000_300, 1_000_000)).toBe(1_010_000);
  // Asked 2 s late: the next poll still an interval after the due time (gap 8 s would be < 0.95 × 10 s: 9.5 s).
  expect(nextPollTime(10_000, 1_002_000, 1_000_000)).toBe(1_011_500);
  // Asked long after it was due (a restart): 0.95 intervals on.
  expect(nextPollTime(10_000, 1_100_000, 1_000_000)).toBe(1_100_000 + minPollGapShare * 10_000);
  expect(nextPollTime(10_000, 1_002_000)).toBe(1_012_000);
});

test('a background poll that ran late keeps the key’s place in the interval; one that ran very late moves it 0.95 intervals on', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(), env: { POLL_INTERVAL_MS: String(intervalMs) } });
  // The first trigger call enrols the key: its own baseline poll, the next an interval after it.
  await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
  const enrolledAt = t.clock.now();
  expect(await nextPollAt()).toBe(enrolledAt + intervalMs);

  // Polled 800 ms after it was due (a claim a tick late): the next is an interval after the due time.
  const due = await nextPollAt();
  t.clock.ms = due + 800;
  expect((await t.services.poller.runUntilIdle()).keys).toBe(1);
  expect(await nextPollAt()).toBe(due + intervalMs);

  // 3 s late: an interval after the due time would be 27 s after this poll; 28.5 s (0.95 intervals) instead.
  const due2 = await nextPollAt();
  t.clock.ms = due2 + 3_000;
  expect((await t.services.poller.runUntilIdle()).keys).toBe(1);
  expect(await nextPollAt()).toBe(due2 + 3_000 + minPollGapShare * intervalMs);

  // Not due yet: nothing polled.
  t.clock.ms = (await nextPollAt()) - 1;
  expect((await t.services.poller.runUntilIdle()).keys).toBe(0);
});

import { afterEach, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { hashKey } from '../../src/auth/keys.js';
import { maxPollGapShare, minPollGapShare, nextPollTime, pollSlot } from '../../src/triggers/poll-key.js';

/**
 * A key's poll times (docs/triggers.md): a background poll keeps the key's place in the
 * interval, its next poll an interval after it was due however late it ran, but never less
 * than 0.95 intervals after it asked the source, and brings a key off its slot back to it
 * (never more than 1.15 intervals after it asked). Injected clock, embedded mode; and upstream
 * mode for a poll whose first attempt was retried (the least gap counts from the retry).
 */
const intervalMs = 30_000;
const keyHash = hashKey(keys.ana);

let t: TestApp;
let upstream: FakeUpstream | undefined;
afterEach(async () => {
  const app = t;
  t = undefined as unknown as TestApp;
  await app?.close();
  await upstream?.stop();
  upstream = undefined;
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

test('nextPollTime with a slot: a key on its slot stays; one off it is back on it within six polls, every gap 0.95 to 1.15 intervals', () => {
  const interval = 10_000;
  // On its slot (due at a multiple of the interval plus the slot), polled on time or a little late: the next slot.
  expect(nextPollTime(interval, 1_000_300, 1_000_300, 300)).toBe(1_010_300);
  expect(nextPollTime(interval, 1_000_700, 1_000_300, 300)).toBe(1_010_300);
  // 1 s late: 0.95 intervals on (9.5 s), 0.5 s past the slot; the next poll, on time, goes back to it.
  expect(nextPollTime(interval, 1_001_300, 1_000_300, 300)).toBe(1_010_800);
  expect(nextPollTime(interval, 1_010_800, 1_010_800, 300)).toBe(1_020_300);
  // Caught up after a restart (due long ago): towards the slot, never more than 1.15 intervals on.
  expect(nextPollTime(interval, 1_000_000, 900_000, 1_500)).toBe(1_011_500); // slot 1.15 intervals on: there at once
  expect(nextPollTime(interval, 1_000_000, 900_000, 3_000)).toBe(1_011_500); // 1.3 intervals on: 1.15 now, the rest next time
  expect(nextPollTime(interval, 1_011_500, 1_011_500, 3_000)).toBe(1_023_000);

  // Every slot, from a catch-up where 1,000 keys were asked within 2 s, polls then on time.
  for (let slot = 0; slot < interval; slot += 37) {
    let asked = 1_000_000 + (slot % 2000);
    let next = nextPollTime(interval, asked, 0, slot);
    for (let poll = 0; poll < 6; poll += 1) {
      expect(next - asked).toBeGreaterThanOrEqual(minPollGapShare * interval);
      expect(next - asked).toBeLessThanOrEqual(maxPollGapShare * interval);
      asked = next;
      next = nextPollTime(interval, asked, asked, slot);
    }
    expect((next - slot) % interval).toBe(0);
  }
});

test('a background poll keeps the key on its slot: a little late, back to it; late past the least gap, 0.95 intervals on and back at the next', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(), env: { POLL_INTERVAL_MS: String(intervalMs) } });
  const slot = pollSlot(keyHash, intervalMs);
  // The first trigger call enrols the key: its own baseline poll, the next an interval after it.
  await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
  const enrolledAt = t.clock.now();
  expect(await nextPollAt()).toBe(enrolledAt + intervalMs);

  // Background polls on time: the key moves to its slot, no gap under 0.95 or over 1.15 intervals.
  for (let poll = 0; poll < 6; poll += 1) {
    const due = await nextPollAt();
    t.clock.ms = due;
    expect((await t.services.poller.runUntilIdle()).keys).toBe(1);
    expect((await nextPollAt()) - due).toBeGreaterThanOrEqual(minPollGapShare * intervalMs);
    expect((await nextPollAt()) - due).toBeLessThanOrEqual(maxPollGapShare * intervalMs);
  }
  expect((await nextPollAt()) % intervalMs).toBe(slot);

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
  // Polled on time then: back on its slot.
  const due3 = await nextPollAt();
  t.clock.ms = due3;
  expect((await t.services.poller.runUntilIdle()).keys).toBe(1);
  expect((await nextPollAt()) % intervalMs).toBe(slot);
  expect((await nextPollAt()) - due3).toBe(intervalMs - 1_500);

  // Not due yet: nothing polled.
  t.clock.ms = (await nextPollAt()) - 1;
  expect((await t.services.poller.runUntilIdle()).keys).toBe(0);
});

/** Upstream mode on a fake upstream (one retry, 10 s timeout), the key enrolled (its baseline taken). */
async function upstreamApp(): Promise<FakeUpstream> {
  const source = (upstream = await new FakeUpstream(catalog()).start());
  t = await buildTestApp({
    clock: new ManualClock(),
    env: {
      POLL_INTERVAL_MS: String(intervalMs),
      DEVICE_API_URL: source.baseUrl,
      UPSTREAM_RETRIES: '1',
      UPSTREAM_TIMEOUT_MS: '10000',
      CONNECTOR_SECRET: 'a1'.repeat(32),
    },
  });
  await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200);
  return source;
}

/** Page 1 of the listing answers 503 after 10 s (as a timeout would, on the test's clock). */
const slowBusyPage = () => ({
  pathPrefix: '/devices',
  page: '1',
  status: 503,
  answer: () => {
    t.clock.advance(10_000);
    return { message: 'Busy' };
  },
});

test('upstream: a poll whose first page was retried is next due at least 0.95 intervals after the attempt that read the source, not after the first attempt', async () => {
  const source = await upstreamApp();
  // Polled on time until the key is on its slot: its next poll then an interval after it was due.
  for (let poll = 0; poll < 4; poll += 1) {
    t.clock.ms = await nextPollAt();
    expect((await t.services.poller.runUntilIdle()).keys).toBe(1);
  }
  expect((await nextPollAt()) % intervalMs).toBe(pollSlot(keyHash, intervalMs));
  const due = await nextPollAt();
  t.clock.ms = due;
  // The poll's first attempt at page 1 fails after 10 s (as a timeout would, on this test's
  // clock); the retry reads the page at due + 10 s.
  const before = source.callsTo('/devices').length;
  source.failNext(slowBusyPage());
  expect(await t.services.poller.runUntilIdle()).toMatchObject({ keys: 1, failed: 0 });
  const attempts = source.callsTo('/devices').slice(before);
  expect(attempts).toHaveLength(2);
  expect(attempts[1]!.requestId).toBe(attempts[0]!.requestId); // one poll, retried
  const readAt = due + 10_000;
  // Counted from the first attempt, the next poll was due an interval after `due`: 20 s after
  // the retry. Now 0.95 intervals after it at least (up to 1.15: forward to the slot).
  expect((await nextPollAt()) - readAt).toBeGreaterThanOrEqual(minPollGapShare * intervalMs);
  expect((await nextPollAt()) - readAt).toBeLessThanOrEqual(maxPollGapShare * intervalMs);
});

test('upstream: a poll that failed after its attempts took long is next due at least 0.95 intervals after it failed, not an interval after it started', async () => {
  const source = await upstreamApp();
  const due = await nextPollAt();
  t.clock.ms = due;
  // Both attempts fail after 10 s each (as timeouts would, on this test's clock): the poll fails at due + 20 s.
  source.failNext(slowBusyPage(), slowBusyPage());
  expect(await t.services.poller.runUntilIdle()).toMatchObject({ keys: 1, failed: 1 });
  const failedAt = due + 20_000;
  expect(t.clock.now()).toBe(failedAt);
  // An interval after it started would be 10 s after its last attempt.
  expect((await nextPollAt()) - failedAt).toBe(Math.ceil(minPollGapShare * intervalMs));
  // The next round polls it then, not before.
  t.clock.ms = (await nextPollAt()) - 1;
  expect((await t.services.poller.runUntilIdle()).keys).toBe(0);
  t.clock.ms += 1;
  expect(await t.services.poller.runUntilIdle()).toMatchObject({ keys: 1, failed: 0 });
});

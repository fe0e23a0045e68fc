import { expect, test } from '@jest/globals';
import { OriginLane } from '../../src/webhooks/origin-lane.js';
import type { Due } from '../../src/webhooks/delivery-types.js';

/**
 * One target origin's lane (docs/webhooks.md, "Fairness"): it sends in fair order, so another
 * hook's delivery claimed while the lane holds one hook's backlog is sent at the next free
 * slot, ahead of the rest of that backlog; and it holds more after running dry during a top-up.
 */
const origin = 'http://receiver.test';
const due = (id: number, hook: string, fairAt: number, leasedUntil = Number.MAX_SAFE_INTEGER): Due => ({
  id,
  hook_id: hook,
  webhook_id: `msg_${id}`,
  attempts: 0,
  target_url: `${origin}/hook`,
  target_origin: origin,
  secret_cipher: 'x',
  event_id: `evt_${id}`,
  type: 'device.offline',
  occurred_at: '2026-06-01T12:00:00.000000Z',
  payload: '{}',
  fair_at: fairAt,
  leased_until: leasedUntil,
});
const sendMs = 10_000;

test("another hook's delivery goes ahead of the later part of a backlog already in the lane", () => {
  const lane = new OriginLane(origin, 2, { min: 16, max: 512 });
  const started: Due[] = [];
  const finishOne = () => {
    lane.finished(0);
    started.push(...lane.startable(0, sendMs));
  };
  // One hook's backlog, placed a second of virtual time apart, claimed 16 ahead: 2 start at once.
  lane.add(Array.from({ length: 16 }, (_, i) => due(i + 1, 'busy', 1_000 * i)));
  started.push(...lane.startable(0, sendMs));
  expect(started.map((d) => d.id)).toEqual([1, 2]);
  expect(lane.startable(0, sendMs)).toEqual([]);
  // The quiet hook's delivery, queued later (its place: 5.5 s), is claimed at the next round.
  lane.add([due(100, 'quiet', 5_500)]);
  finishOne();
  finishOne();
  expect(started.map((d) => d.id)).toEqual([1, 2, 3, 4]);
  // Backlog places 2 and 3 s went first (they were ahead of it); 6 s and later wait behind it.
  for (let i = 0; i < 3; i += 1) finishOne();
  expect(started.map((d) => d.id)).toEqual([1, 2, 3, 4, 5, 6, 100]);
  expect(lane.held).toBe(17 - 5);
  expect(lane.leased.size).toBe(17);
});

test('a delivery whose lease cannot cover a send is let go unsent, and no longer counts as leased', () => {
  const lane = new OriginLane(origin, 4, { min: 16, max: 512 });
  lane.add([due(1, 'a', 0, 1_000 + sendMs), due(2, 'a', 1, 1_000 + sendMs - 1)]);
  expect(lane.startable(1_000, sendMs).map((d) => d.id)).toEqual([1]);
  expect([...lane.leased].map((d) => d.id)).toEqual([1]);
  lane.finished(0);
  lane.recorded([...lane.leased][0]!);
  expect(lane.forgettable).toBe(true);
});

test('asks for a claim at half way and when empty; running dry during the top-up grows it fourfold, a timely top-up shrinks it by a quarter', () => {
  const lane = new OriginLane(origin, 1, { min: 4, max: 64 });
  lane.add([1, 2, 3, 4].map((id) => due(id, 'a', id)));
  expect(lane.capacity).toBe(4);
  const sendNext = () => {
    lane.finished(0);
    lane.startable(0, sendMs);
    return lane.wantsClaim();
  };
  lane.startable(0, sendMs);
  expect(sendNext()).toBe(false); // 3 held of 4
  expect(sendNext()).toBe(true); // 2 held: half way, a top-up is asked for once
  expect(sendNext()).toBe(true); // 1 held, none waiting: ran dry while the top-up was under way
  expect(lane.capacity).toBe(16);
  // The top-up comes after the lane ran dry: it keeps its size.
  lane.add([5, 6].map((id) => due(id, 'a', id)));
  expect(lane.capacity).toBe(16);
  lane.add([7].map((id) => due(id, 'a', id)));
  // Asked for at half way (8 of 16 or fewer), the next top-up comes before the lane is empty.
  expect(sendNext()).toBe(true);
  lane.add([8, 9].map((id) => due(id, 'a', id)));
  expect(lane.capacity).toBe(12);
});

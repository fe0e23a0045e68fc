import { expect, test } from '@jest/globals';
import { TargetLanes } from '../../src/webhooks/target-lanes.js';
import type { Due } from '../../src/webhooks/delivery-types.js';

/**
 * Per-target lanes (docs/webhooks.md, "Fairness"): a lane sends in fair order, so another
 * hook's delivery claimed while the lane holds one hook's backlog is sent at the next free
 * slot, ahead of the rest of that backlog.
 */
const origin = 'http://receiver.test';
const due = (id: number, hook: string, fairAt: number): Due => ({
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
  leased_until: Number.MAX_SAFE_INTEGER,
});

test("another hook's delivery goes ahead of the later part of a backlog already in the lane", () => {
  const started: Due[] = [];
  const lanes = new TargetLanes(
    2,
    { min: 16, max: 512 },
    (d) => started.push(d),
    () => false,
  );
  // One hook's backlog, placed a second of virtual time apart, claimed 16 ahead: 2 start at once.
  lanes.add(Array.from({ length: 16 }, (_, i) => due(i + 1, 'busy', 1_000 * i)));
  expect(started.map((d) => d.id)).toEqual([1, 2]);
  // The quiet hook's delivery, queued later (its place: 5.5 s), is claimed at the next round.
  lanes.add([due(100, 'quiet', 5_500)]);
  lanes.finished(origin);
  lanes.drain(origin);
  lanes.finished(origin);
  lanes.drain(origin);
  expect(started.map((d) => d.id)).toEqual([1, 2, 3, 4]);
  // Backlog places 2 and 3 s went first (they were ahead of it); 6 s and later wait behind it.
  for (let i = 0; i < 3; i += 1) {
    lanes.finished(origin);
    lanes.drain(origin);
  }
  expect(started.map((d) => d.id)).toEqual([1, 2, 3, 4, 5, 6, 100]);
});

import { describe, expect, test } from '@jest/globals';
import { clockTime, describeAttempt, describeEvent, type NarratedAttempt, type NarratedEvent } from '../../src/demo/narrator.js';

const heartbeat = '2026-06-01T12:00:05.000000Z';
const event: NarratedEvent = {
  id: 'evt_1',
  type: 'device.offline',
  occurred_at: '2026-06-01T12:00:25.000000Z',
  device: { id: 'a4:83:e7:1f:2b:01', name: 'Front counter', last_heartbeat_at: heartbeat },
};
const attempt = (outcome: string, extra: Partial<NarratedAttempt> = {}): NarratedAttempt => ({
  event_id: 'evt_1',
  attempt: 1,
  status_code: 500,
  error: null,
  duration_ms: 12,
  next_attempt_at: '2026-06-01T12:00:30.000000Z',
  outcome,
  ...extra,
});
const target = 'http://localhost:4000/hook?token=abc';

describe('demo narration lines', () => {
  test('events say which screen went offline since when, or came back', () => {
    expect(describeEvent(event)).toBe(`Front counter (a4:83:e7:1f:2b:01) went offline: no heartbeat since ${clockTime(heartbeat)}`);
    expect(describeEvent({ ...event, device: { ...event.device, last_heartbeat_at: null } })).toBe(
      'Front counter (a4:83:e7:1f:2b:01) went offline: it never sent a heartbeat',
    );
    expect(describeEvent({ ...event, type: 'device.online' })).toBe('Front counter (a4:83:e7:1f:2b:01) is back online');
  });

  test('each delivery outcome is one sentence, without the target URL’s query', () => {
    const next = clockTime('2026-06-01T12:00:30.000000Z');
    expect(describeAttempt(attempt('delivered', { status_code: 204 }), event, target)).toBe(
      'Webhook device.offline of Front counter delivered to http://localhost:4000/hook (HTTP 204, 12 ms, attempt 1)',
    );
    expect(describeAttempt(attempt('retrying'), event, target)).toBe(
      `Webhook device.offline of Front counter to http://localhost:4000/hook failed (HTTP 500, attempt 1); retrying at ${next}`,
    );
    expect(describeAttempt(attempt('dead', { status_code: null, error: 'timed out', attempt: 5, next_attempt_at: null }), event, target)).toBe(
      'Webhook device.offline of Front counter to http://localhost:4000/hook failed (timed out, attempt 5); no retries left, the delivery is dead',
    );
    expect(describeAttempt(attempt('disabled', { status_code: 410 }), undefined, target)).toBe(
      'Webhook event evt_1 to http://localhost:4000/hook: the receiver answered 410 Gone, so the hook is disabled',
    );
  });
});

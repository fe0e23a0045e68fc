import { describe, expect, test } from '@jest/globals';
import { RejectedLog, rejectedLogMaxRecords, rejectedLogWindowMs } from '../../src/upstream/rejected-log.js';
import { ManualClock } from '../helpers/app.js';

const record = (id: string | null, field = 'last_heartbeat_at', resource = 'device', area = 'device') => ({ area, resource, id, field });

describe('which invalid upstream records get a warn line', () => {
  test('one line per (area, resource, id, field) per 10 minutes', () => {
    expect(rejectedLogWindowMs).toBe(600_000);
    const clock = new ManualClock();
    const log = new RejectedLog(clock);
    expect(log.decide(record('a'))).toBe('log');
    expect(log.decide(record('a'))).toBe('quiet');
    expect(log.decide(record('a', 'name'))).toBe('log');
    expect(log.decide(record('a', 'name', 'group', 'menu'))).toBe('log');
    expect(log.decide(record('b'))).toBe('log');
    expect(log.decide(record(null))).toBe('log');
    expect(log.decide(record(null))).toBe('quiet');
    clock.advance(rejectedLogWindowMs - 1);
    expect(log.decide(record('a'))).toBe('quiet');
    clock.advance(1);
    expect(log.decide(record('a'))).toBe('log');
    expect(log.decide(record('a'))).toBe('quiet');
  });

  test('bounded: past the records it can tell apart within a window, the rest are only counted, and one line says so per window', () => {
    expect(rejectedLogMaxRecords).toBe(10_000);
    const clock = new ManualClock();
    const log = new RejectedLog(clock, 1000, 3);
    expect(['a', 'b', 'c'].map((id) => log.decide(record(id)))).toEqual(['log', 'log', 'log']);
    // Full of lines within the window: a fourth record is not logged, and none of the three is forgotten.
    expect(log.decide(record('d'))).toBe('full');
    expect(['a', 'b', 'c'].map((id) => log.decide(record(id)))).toEqual(['quiet', 'quiet', 'quiet']);
    expect(log.fullLineDue()).toBe(true);
    expect(log.fullLineDue()).toBe(false);
    // Once the oldest line is past the window, a new record takes its place.
    clock.advance(1000);
    expect(log.decide(record('d'))).toBe('log');
    expect(log.decide(record('d'))).toBe('quiet');
    expect(log.fullLineDue()).toBe(true);
  });
});

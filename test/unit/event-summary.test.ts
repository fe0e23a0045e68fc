import { describe, expect, test } from '@jest/globals';
import { summarise, summaryWindow } from '../../src/triggers/event-summary.js';

// The pure half of GET /v1/events/summary: the window and the zero-filled buckets.
const now = Date.parse('2026-06-01T12:34:56.789Z');

describe('summaryWindow', () => {
  test('hours: from the hour that holds the start of the retained week to the end of the current hour', () => {
    const w = summaryWindow('hour', now);
    expect(w.from).toBe('2026-05-25T12:00:00.000000Z');
    expect(w.until).toBe('2026-06-01T13:00:00.000000Z');
    expect((w.untilMs - w.fromMs) / 3_600_000).toBe(169);
    expect(w.periodLength).toBe(13);
  });

  test('days: whole UTC days', () => {
    const w = summaryWindow('day', now);
    expect(w.from).toBe('2026-05-25T00:00:00.000000Z');
    expect(w.until).toBe('2026-06-02T00:00:00.000000Z');
    expect(w.periodLength).toBe(10);
  });
});

describe('summarise', () => {
  test('every period is listed in order, the counted ones filled in, the others 0', () => {
    const w = summaryWindow('hour', now);
    const s = summarise(
      w,
      ['device.offline', 'device.online'],
      [
        { period: '2026-06-01T12', type: 'device.offline', count: 3 },
        { period: '2026-05-25T12', type: 'device.online', count: 2 },
      ],
    );
    expect(s.buckets).toHaveLength(169);
    expect(s.buckets[0]).toEqual({ start: '2026-05-25T12:00:00Z', counts: { 'device.offline': 0, 'device.online': 2 } });
    expect(s.buckets[168]).toEqual({ start: '2026-06-01T12:00:00Z', counts: { 'device.offline': 3, 'device.online': 0 } });
    expect(s.buckets.slice(1, 168).every((b) => b.counts['device.offline'] === 0 && b.counts['device.online'] === 0)).toBe(true);
    expect(s.totals).toEqual({ 'device.offline': 3, 'device.online': 2 });
    expect(s).toMatchObject({ interval: 'hour', from: '2026-05-25T12:00:00Z', until: '2026-06-01T13:00:00Z' });
  });
});

import { describe, expect, test } from '@jest/globals';
import { canonicalIso, formatMicros, normalizeTimestamp, parseIso, parseTimestamp } from '../../src/time/timestamps.js';

/** A fixed "now" for relative timestamps: 2026-06-01T12:00:00Z. */
const nowMs = Date.parse('2026-06-01T12:00:00.000Z');
const norm = (text: string) => normalizeTimestamp(text, nowMs);

describe('absolute timestamps', () => {
  test('parse/format round trip keeps microseconds', () => {
    for (const text of [
      '2025-01-10T09:00:00.123456Z',
      '2025-02-01T14:30:00.000001Z',
      '2025-12-31T23:59:59.999999Z',
      '1970-01-01T00:00:00.000000Z',
      '1969-12-31T23:59:59.999999Z',
      '2024-02-29T00:00:00.000000Z',
    ]) {
      const micros = parseIso(text);
      expect(micros).not.toBeNull();
      expect(formatMicros(micros!)).toBe(text);
      expect(norm(text)).toBe(text);
    }
  });

  test('parses to integer microseconds since the epoch', () => {
    expect(parseIso('1970-01-01T00:00:00.000001Z')).toBe(1);
    expect(parseIso('2025-01-10T09:00:00.123456Z')).toBe(Date.parse('2025-01-10T09:00:00.123Z') * 1000 + 456);
    expect(formatMicros(0)).toBe('1970-01-01T00:00:00.000000Z');
    expect(formatMicros(-1)).toBe('1969-12-31T23:59:59.999999Z');
  });

  test('fewer than six fractional digits are padded, none gives .000000', () => {
    expect(norm('2025-01-10T09:00:00.5Z')).toBe('2025-01-10T09:00:00.500000Z');
    expect(norm('2025-01-10T09:00:00.12Z')).toBe('2025-01-10T09:00:00.120000Z');
    expect(norm('2025-01-10T09:00:00.1234Z')).toBe('2025-01-10T09:00:00.123400Z');
    expect(norm('2025-01-10T09:00:00Z')).toBe('2025-01-10T09:00:00.000000Z');
  });

  test('more than six fractional digits are truncated, not rounded', () => {
    expect(norm('2025-01-10T09:00:00.1234567Z')).toBe('2025-01-10T09:00:00.123456Z');
    expect(norm('2025-01-10T09:00:00.999999999Z')).toBe('2025-01-10T09:00:00.999999Z');
  });

  test('zone offsets are applied', () => {
    expect(norm('2025-01-10T09:00:00+02:00')).toBe('2025-01-10T07:00:00.000000Z');
    expect(norm('2025-01-10T09:00:00.123456+02:00')).toBe('2025-01-10T07:00:00.123456Z');
    expect(norm('2025-01-10T09:00:00-0530')).toBe('2025-01-10T14:30:00.000000Z');
    expect(norm('2025-01-10T09:00:00.5-05:30')).toBe('2025-01-10T14:30:00.500000Z');
    expect(norm('2025-01-10T01:00:00+0300')).toBe('2025-01-09T22:00:00.000000Z');
    expect(norm('2025-01-10T09:00:00+00:00')).toBe('2025-01-10T09:00:00.000000Z');
    expect(norm('2025-01-10T09:00:00-00')).toBe('2025-01-10T09:00:00.000000Z');
    expect(norm('2025-01-10T09:00:00z')).toBe('2025-01-10T09:00:00.000000Z');
  });

  test('a space instead of T, and a comma before the fraction, are accepted', () => {
    expect(norm('2025-01-10 09:00:00.25Z')).toBe('2025-01-10T09:00:00.250000Z');
    expect(norm('2025-01-10T09:00:00,25Z')).toBe('2025-01-10T09:00:00.250000Z');
  });

  test.each([
    ['day that does not exist', '2025-02-30T00:00:00Z'],
    ['29 February in a common year', '2025-02-29T00:00:00Z'],
    ['31 April', '2025-04-31T00:00:00Z'],
    ['hour 25', '2025-01-10T25:00:00Z'],
    ['hour 24', '2025-01-10T24:00:00Z'],
    ['minute 60', '2025-01-10T09:60:00Z'],
    ['second 60', '2025-01-10T09:00:60Z'],
    ['month 13', '2025-13-01T00:00:00Z'],
    ['month 00', '2025-00-10T00:00:00Z'],
    ['day 00', '2025-01-00T00:00:00Z'],
    ['missing zone', '2025-01-10T09:00:00'],
    ['missing zone with fraction', '2025-01-10T09:00:00.123456'],
    ['zone hour out of range', '2025-01-10T09:00:00+25:00'],
    ['zone minutes out of range', '2025-01-10T09:00:00+02:99'],
    ['date only', '2025-01-10'],
    ['no seconds', '2025-01-10T09:00Z'],
    ['two-digit year', '25-01-10T09:00:00Z'],
    ['empty fraction', '2025-01-10T09:00:00.Z'],
    ['ten fractional digits', '2025-01-10T09:00:00.1234567890Z'],
    ['named zone', '2025-01-10T09:00:00 UTC'],
    ['trailing space', '2025-01-10T09:00:00Z '],
    ['year beyond exact microseconds', '9999-12-31T23:59:59Z'],
  ])('rejects %s (%s)', (_why, text) => {
    expect(parseIso(text)).toBeNull();
    expect(parseTimestamp(text, nowMs)).toBeNull();
    expect(normalizeTimestamp(text, nowMs)).toBeNull();
  });
});

describe('the six-digit form (what an upstream sends)', () => {
  // The form formatMicros prints gets no shortcut past the calendar: Date.parse accepts every
  // one of these, rolled over (30 February is 2 March).
  test.each([
    '2026-02-30T10:00:00.000000Z',
    '2026-02-31T23:59:59.999999Z',
    '2026-04-31T10:00:00.000000Z',
    '2025-02-29T00:00:00.000000Z',
    '2026-06-31T00:00:00.000001Z',
    '2026-01-10T24:00:00.000000Z',
    '2026-01-10T10:60:00.000000Z',
    '2026-01-10T10:00:60.000000Z',
    '2026-13-01T00:00:00.000000Z',
    '2026-01-00T00:00:00.000000Z',
  ])('%s is no instant: refused by every parser', (text) => {
    expect(canonicalIso(text)).toBeNull();
    expect(parseIso(text)).toBeNull();
    expect(normalizeTimestamp(text, nowMs)).toBeNull();
  });

  test('text already in the form comes back as it is; any other absolute form is printed in it', () => {
    for (const text of ['2024-02-29T23:59:59.999999Z', '2026-04-30T10:00:00.000001Z', '1970-01-01T00:00:00.000000Z']) {
      expect(canonicalIso(text)).toBe(text);
    }
    expect(canonicalIso('2026-04-30T12:00:00+02:00')).toBe('2026-04-30T10:00:00.000000Z');
    expect(canonicalIso('2026-04-30 10:00:00.5z')).toBe('2026-04-30T10:00:00.500000Z');
    expect(canonicalIso('now')).toBeNull();
  });
});

describe('relative timestamps', () => {
  test.each([
    ['now', '2026-06-01T12:00:00.000000Z'],
    ['now-90s', '2026-06-01T11:58:30.000000Z'],
    ['now-10m', '2026-06-01T11:50:00.000000Z'],
    ['now+2h', '2026-06-01T14:00:00.000000Z'],
    ['now-3d', '2026-05-29T12:00:00.000000Z'],
    ['now+0s', '2026-06-01T12:00:00.000000Z'],
    ['now-1d', '2026-05-31T12:00:00.000000Z'],
  ])('%s resolves against the given now', (text, expected) => {
    expect(normalizeTimestamp(text, nowMs)).toBe(expected);
    expect(parseTimestamp(text, nowMs)).toBe(Date.parse(expected) * 1000);
  });

  test('keeps the sub-millisecond part of now (whole milliseconds) exactly', () => {
    expect(normalizeTimestamp('now-90s', nowMs + 123)).toBe('2026-06-01T11:58:30.123000Z');
  });

  test('a different now gives a different result', () => {
    expect(normalizeTimestamp('now-10m', Date.parse('2025-01-01T00:00:00Z'))).toBe('2024-12-31T23:50:00.000000Z');
  });

  test.each([
    'yesterday',
    'Now',
    'NOW-10m',
    'now-',
    'now-10',
    'now-10w',
    'now-1.5h',
    'now - 10m',
    ' now',
    'now ',
    'now-10mm',
    'now--10m',
    'now*2h',
    '',
    'now+999999999d', // far beyond any representable time
    '1736499600',
    'garbage',
  ])('rejects %j', (text) => {
    expect(parseTimestamp(text, nowMs)).toBeNull();
    expect(normalizeTimestamp(text, nowMs)).toBeNull();
  });
});

import { formatMicros } from '../time/timestamps.js';
import { retentionMs } from './event-log.js';

/** The periods `GET /v1/events/summary` counts in (docs/triggers.md). */
export const summaryIntervals = ['hour', 'day'] as const;
export type SummaryInterval = (typeof summaryIntervals)[number];

const periodMs: Record<SummaryInterval, number> = { hour: 3_600_000, day: 86_400_000 };
/** How many leading characters of a stored timestamp name its period. */
const periodLength: Record<SummaryInterval, 10 | 13> = { hour: 13, day: 10 };

export interface SummaryWindow {
  interval: SummaryInterval;
  /** The first period's start (ms), in the retained week. */
  fromMs: number;
  /** The end of the current period (ms, exclusive). */
  untilMs: number;
  periodLength: 10 | 13;
  /** `fromMs` and `untilMs` in the stored timestamp form, for comparing with `occurred_at`. */
  from: string;
  until: string;
}

export interface SummaryBucket {
  start: string;
  counts: Record<string, number>;
}

export interface EventSummary {
  interval: SummaryInterval;
  from: string;
  until: string;
  types: string[];
  totals: Record<string, number>;
  buckets: SummaryBucket[];
}

/** The retained week up to the end of the current period, in whole periods (UTC). */
export function summaryWindow(interval: SummaryInterval, nowMs: number): SummaryWindow {
  const size = periodMs[interval];
  const untilMs = Math.floor(nowMs / size) * size + size;
  const fromMs = Math.floor((nowMs - retentionMs) / size) * size;
  return { interval, fromMs, untilMs, periodLength: periodLength[interval], from: formatMicros(fromMs * 1000), until: formatMicros(untilMs * 1000) };
}

/** `2026-11-27T13:00:00Z` for a period's start: what a chart's time axis reads. */
function periodStart(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/**
 * Every period of the window in order, with a count for each type (0 where nothing happened),
 * from the database's counts per (period, type). Pure: the route does the I/O.
 */
export function summarise(window: SummaryWindow, types: readonly string[], rows: ReadonlyArray<{ period: string; type: string; count: number }>): EventSummary {
  const byPeriod = new Map<string, Map<string, number>>();
  for (const row of rows) {
    const counts = byPeriod.get(row.period) ?? new Map<string, number>();
    counts.set(row.type, (counts.get(row.type) ?? 0) + row.count);
    byPeriod.set(row.period, counts);
  }
  const totals = Object.fromEntries(types.map((type) => [type, 0]));
  const buckets: SummaryBucket[] = [];
  const size = periodMs[window.interval];
  for (let ms = window.fromMs; ms < window.untilMs; ms += size) {
    const start = periodStart(ms);
    const found = byPeriod.get(start.slice(0, window.periodLength));
    const counts = Object.fromEntries(types.map((type) => [type, found?.get(type) ?? 0]));
    for (const type of types) totals[type]! += counts[type]!;
    buckets.push({ start, counts });
  }
  return { interval: window.interval, from: periodStart(window.fromMs), until: periodStart(window.untilMs), types: [...types], totals, buckets };
}

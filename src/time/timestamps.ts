/**
 * Timestamps with microsecond precision (CONTRACT section 4): kept as integer microseconds
 * since the epoch, printed as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. The fixed-width form sorts
 * lexicographically in time order, which the database relies on.
 */

/** Microseconds since the Unix epoch. */
export type Micros = number;

export interface Clock {
  /** Milliseconds since the epoch, like Date.now(); injected so tests control time. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

const isoPattern =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}(?::?\d{2})?)$/i;
const relativePattern = /^now(?:([+-])(\d{1,9})([smhd]))?$/;
const unitMicros: Record<string, number> = { s: 1e6, m: 60e6, h: 3600e6, d: 86400e6 };

/** Parses an absolute ISO 8601 timestamp with a zone; null when it is not one. */
export function parseIso(text: string): Micros | null {
  const m = isoPattern.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = '', zone] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const date = new Date(ms);
  // Reject dates that Date.UTC silently rolls over (2025-02-30, 25:00).
  if (date.getUTCDate() !== Number(d) || date.getUTCHours() !== Number(h) || Number(s) > 59) return null;
  const micros = Number(frac.padEnd(6, '0').slice(0, 6));
  return ms * 1000 + micros - zoneOffsetMicros(zone!);
}

function zoneOffsetMicros(zone: string): number {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0');
  return sign * minutes * 60e6;
}

/** Parses `now`, `now-90s`, `now+2h` … relative to `nowMs`, or an absolute timestamp. */
export function parseTimestamp(text: string, nowMs: number): Micros | null {
  const rel = relativePattern.exec(text);
  if (rel) {
    const [, sign, amount, unit] = rel;
    const offset = sign ? Number(amount) * unitMicros[unit!]! * (sign === '-' ? -1 : 1) : 0;
    return nowMs * 1000 + offset;
  }
  return parseIso(text);
}

/** Formats microseconds as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
export function formatMicros(micros: Micros): string {
  const ms = Math.floor(micros / 1000);
  const rest = micros - ms * 1000;
  const iso = new Date(ms).toISOString(); // 2025-01-10T09:00:00.123Z
  return `${iso.slice(0, 23)}${String(rest).padStart(3, '0')}Z`;
}

/** Normalises any accepted timestamp string to the six-digit form; null when invalid. */
export function normalizeTimestamp(text: string, nowMs: number): string | null {
  const micros = parseTimestamp(text, nowMs);
  return micros === null ? null : formatMicros(micros);
}

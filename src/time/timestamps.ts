/**
 * Timestamps with microsecond precision (docs/devices.md): kept as integer microseconds
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

const isoPattern = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(Z|[+-]\d{2}(?::?\d{2})?)$/i;
const relativePattern = /^now(?:([+-])(\d{1,9})([smhd]))?$/;
const unitMicros: Record<string, number> = { s: 1e6, m: 60e6, h: 3600e6, d: 86400e6 };

/** Parses an absolute ISO 8601 timestamp with a zone; null when it is not one. */
export function parseIso(text: string): Micros | null {
  const m = isoPattern.exec(text);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = '', zone] = m;
  if (!fieldsExist(Number(y), Number(mo), Number(d), Number(h), Number(mi), Number(s))) return null;
  // setUTCFullYear, not Date.UTC: Date.UTC maps years 0-99 to 1900-1999.
  const date = new Date(0);
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d));
  date.setUTCHours(Number(h), Number(mi), Number(s), 0);
  const ms = date.getTime();
  const offset = zoneOffsetMicros(zone!);
  if (offset === null) return null;
  const micros = Number(frac.padEnd(6, '0').slice(0, 6));
  return inRange(ms * 1000 + micros - offset);
}

/**
 * Whether these calendar fields name a real moment: the one check every parser makes, since
 * Date (and Date.parse) silently roll over 2025-02-30, 25:00, month 13 or 00, 09:60.
 */
function fieldsExist(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return day <= (month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);
}

/** The zone's offset from UTC; null for an impossible one (+25:00, +02:99). */
function zoneOffsetMicros(zone: string): number | null {
  if (zone.toUpperCase() === 'Z') return 0;
  const sign = zone.startsWith('-') ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const hours = Number(digits.slice(0, 2));
  const mins = Number(digits.slice(2) || '0');
  if (hours > 23 || mins > 59) return null;
  return sign * (hours * 60 + mins) * 60e6;
}

/**
 * Microseconds are exact only as safe integers (about 1685-2255); outside that range a value
 * would be silently rounded (and far outside it formatMicros throws), so it is rejected.
 */
function inRange(micros: number): Micros | null {
  return Number.isSafeInteger(micros) ? micros : null;
}

/** Parses `now`, `now-90s`, `now+2h` … relative to `nowMs`, or an absolute timestamp. */
export function parseTimestamp(text: string, nowMs: number): Micros | null {
  const rel = relativePattern.exec(text);
  if (rel) {
    const [, sign, amount, unit] = rel;
    const offset = sign ? Number(amount) * unitMicros[unit!]! * (sign === '-' ? -1 : 1) : 0;
    // Bounded like absolute ones: `now+999999999d` used to pass validation and then throw a
    // RangeError in formatMicros halfway through an import.
    return inRange(nowMs * 1000 + offset);
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

/** The printed form (formatMicros): what a conforming upstream sends. */
const canonicalPattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{6}Z$/;

/**
 * An absolute timestamp in the six-digit form, or null when it is no real instant. Text already
 * in that form comes back as it is, without building a Date (an upstream page of 1,000 devices
 * has 5,000 of them), but never without the calendar check: a shortcut on Date.parse once let
 * 2026-02-30T10:00:00.000000Z through, rolled over to 2 March.
 */
export function canonicalIso(text: string): string | null {
  const m = canonicalPattern.exec(text);
  // Years well inside the exact range (see inRange); the rest take the long way.
  if (m && Number(m[1]) >= 1700 && Number(m[1]) <= 2200) {
    return fieldsExist(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) ? text : null;
  }
  const micros = parseIso(text);
  return micros === null ? null : formatMicros(micros);
}

/** Normalises any accepted timestamp string to the six-digit form; null when invalid. */
export function normalizeTimestamp(text: string, nowMs: number): string | null {
  const micros = parseTimestamp(text, nowMs);
  return micros === null ? null : formatMicros(micros);
}

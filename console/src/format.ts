/** "12 s ago", "3 min ago", "2 h ago", "4 days ago" from a timestamp, against `nowMs`. */
export function age(timestamp: string | null, nowMs: number): string {
  if (!timestamp) return 'never';
  const seconds = Math.max(0, Math.round((nowMs - Date.parse(timestamp)) / 1000));
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  const days = Math.floor(seconds / 86_400);
  return `${days} day${days === 1 ? '' : 's'} ago`;
}

/** A timestamp as the reader's local date and time, to the second. */
export function when(timestamp: string | null): string {
  return timestamp ? new Date(timestamp).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : '—';
}

/** `value` as an integer with thousands separators. */
export const count = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : value.toLocaleString('en'));

/**
 * Pure analysis of poll times per key (as FleetUpstream records them) over a window: how many
 * keys were polled in each interval, which polls came too soon after the previous poll of the
 * same key ("polled twice in one interval"), and the longest gap. Shared by the replica tests
 * and bench row 5.
 */
export interface Gap {
  key: number;
  /** When the later poll happened (or the window's end, for an open gap). */
  at: number;
  ms: number;
  /** No poll since the previous one up to the end of the window: a lower bound. */
  open?: boolean;
}

export interface PollAnalysis {
  /** Polls inside the window. */
  polls: number;
  /** Keys with at least one poll inside the window. */
  keysPolled: number;
  /** Distinct keys polled in each whole interval of the window, in order. */
  keysPerInterval: number[];
  /**
   * Consecutive polls of one key less than `shortFactor` × interval apart (the later one in the
   * window); with `callIds`, two attempts of one call (a retry) are not among them.
   */
  shortGaps: Gap[];
  /** With `callIds`: consecutive entries of one key that were attempts of one call (retries), in the window. */
  retries: number;
  /** Every gap ending in the window (open gaps at its end included), longest first. */
  gaps: Gap[];
}

/**
 * `callIds`, when given, is beside `polls`: each entry's upstream call (FleetUpstream.pollIds,
 * the X-Request-Id every attempt of one call carries). The attempts of one call are one poll
 * asked again after a timeout or a 5xx: their gap is still a gap (the key went that long
 * without an answer), but never a key polled twice.
 */
export function analysePolls(
  polls: readonly (readonly number[])[],
  window: { from: number; to: number },
  intervalMs: number,
  shortFactor = 0.9,
  callIds?: readonly (readonly string[])[],
): PollAnalysis {
  const { from, to } = window;
  const slots = Math.max(0, Math.floor((to - from) / intervalMs));
  const perSlot = Array.from({ length: slots }, () => new Set<number>());
  const shortGaps: Gap[] = [];
  const gaps: Gap[] = [];
  let count = 0;
  let keysPolled = 0;
  let retries = 0;
  polls.forEach((times, key) => {
    const ids = callIds?.[key];
    let previous: number | null = null;
    let polledHere = false;
    for (const [i, at] of times.entries()) {
      if (at > to) break;
      if (at >= from) {
        count += 1;
        polledHere = true;
        const slot = Math.floor((at - from) / intervalMs);
        if (slot < slots) perSlot[slot]!.add(key);
        if (previous !== null) {
          const gap: Gap = { key, at, ms: at - previous };
          gaps.push(gap);
          const retry = ids !== undefined && ids[i] !== undefined && ids[i] !== '' && ids[i] === ids[i - 1];
          if (retry) retries += 1;
          else if (gap.ms < shortFactor * intervalMs) shortGaps.push(gap);
        }
      }
      previous = at;
    }
    if (polledHere) keysPolled += 1;
    if (previous !== null && to - previous > intervalMs) gaps.push({ key, at: to, ms: to - previous, open: true });
  });
  gaps.sort((a, b) => b.ms - a.ms);
  return { polls: count, keysPolled, keysPerInterval: perSlot.map((s) => s.size), shortGaps, retries, gaps };
}

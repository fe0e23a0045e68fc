/**
 * Turns of the event loop while `work` runs: a chain of setImmediate callbacks counts them.
 * Work done in one piece lets none happen; work in slices that yield lets one per slice. A
 * count, where a wall-clock figure of the loop's stalls would be noisy on a shared machine.
 */
export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ turns: number; result: T }> {
  let turns = 0;
  let counting = true;
  const turn = () => {
    turns += 1;
    if (counting) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    const result = await work();
    return { turns, result };
  } finally {
    counting = false;
  }
}

/**
 * The longest pause between two turns of the event loop while `work` runs, with the number of
 * turns: a stall of the loop is a long pause, whatever else shares the machine makes every
 * pause a little longer. Compare it with how long the work took, not with a fixed figure.
 */
export async function longestPauseDuring<T>(work: () => Promise<T>): Promise<{ longestMs: number; turns: number; tookMs: number; result: T }> {
  let longestMs = 0;
  let turns = 0;
  let counting = true;
  const started = performance.now();
  let last = started;
  const turn = () => {
    const now = performance.now();
    longestMs = Math.max(longestMs, now - last);
    last = now;
    turns += 1;
    if (counting) setImmediate(turn);
  };
  setImmediate(turn);
  try {
    const result = await work();
    const end = performance.now();
    longestMs = Math.max(longestMs, end - last);
    return { longestMs, turns, tookMs: end - started, result };
  } finally {
    counting = false;
  }
}

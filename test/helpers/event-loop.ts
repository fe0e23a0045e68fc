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

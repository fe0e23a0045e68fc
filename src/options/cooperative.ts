import { setImmediate } from 'node:timers/promises';

/**
 * Work over big lists that lets other requests run in between: no step holds the event loop
 * for more than a slice of the list (about a few milliseconds), whatever the list's length.
 */

/** Items handled between two yields. */
export const slice = 2000;

/** `items.map(fn)`, yielding to the event loop between slices. */
export async function mapCooperatively<T, U>(items: readonly T[], fn: (item: T) => U): Promise<U[]> {
  const out: U[] = new Array(items.length);
  for (let start = 0; start < items.length; start += slice) {
    if (start > 0) await setImmediate();
    const end = Math.min(items.length, start + slice);
    for (let i = start; i < end; i++) out[i] = fn(items[i]!);
  }
  return out;
}

/** `items.filter(keep)`, yielding to the event loop between slices; small lists at once. */
export async function filterCooperatively<T>(items: readonly T[], keep: (item: T) => boolean): Promise<T[]> {
  if (items.length <= slice) return items.filter(keep);
  const out: T[] = [];
  for (let start = 0; start < items.length; start += slice) {
    if (start > 0) await setImmediate();
    const end = Math.min(items.length, start + slice);
    for (let i = start; i < end; i++) if (keep(items[i]!)) out.push(items[i]!);
  }
  return out;
}

/**
 * A stable sort (as `Array.prototype.sort`) that yields between steps: runs of one slice are
 * sorted in place, then merged pairwise, a bounded number of comparisons per step.
 */
export async function sortCooperatively<T>(items: T[], compare: (a: T, b: T) => number): Promise<T[]> {
  if (items.length <= slice) return items.sort(compare);
  let from = items.slice();
  for (let start = 0; start < from.length; start += slice) {
    if (start > 0) await setImmediate();
    const run = from.slice(start, start + slice).sort(compare);
    for (let i = 0; i < run.length; i++) from[start + i] = run[i]!;
  }
  let to: T[] = new Array(from.length);
  let budget = 0;
  for (let width = slice; width < from.length; width *= 2) {
    for (let left = 0; left < from.length; left += 2 * width) {
      const mid = Math.min(left + width, from.length);
      const right = Math.min(left + 2 * width, from.length);
      let i = left;
      let j = mid;
      let k = left;
      while (i < mid && j < right) {
        to[k++] = compare(from[j]!, from[i]!) < 0 ? from[j++]! : from[i++]!;
        if (++budget >= slice * 4) {
          budget = 0;
          await setImmediate();
        }
      }
      while (i < mid) to[k++] = from[i++]!;
      while (j < right) to[k++] = from[j++]!;
    }
    [from, to] = [to, from];
  }
  for (let i = 0; i < from.length; i++) items[i] = from[i]!;
  return items;
}

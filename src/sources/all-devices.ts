import type { Device, DeviceBatch, DevicePage, DeviceQuery } from './types.js';

/** Pages of a source read a page at a time. */
export const devicePageSize = 1000;

/**
 * Every page of a numbered-page listing (an upstream's `GET /devices`) in order: page 1 tells
 * the total, the rest are fetched at most `concurrency` at a time (an upstream is never hit by
 * a burst) and handed on in order as they arrive, so no more than `concurrency` pages are held.
 */
export async function* numberedPages(
  list: (query: DeviceQuery) => Promise<DevicePage>,
  pageSize: number,
  concurrency = 4,
): AsyncGenerator<DeviceBatch<Device>> {
  const first = await list({ page: 1, pageSize });
  yield batchOf(first);
  const last = Math.ceil(first.total / pageSize);
  const ahead: Array<Promise<DevicePage>> = [];
  let next = 2;
  const fill = () => {
    while (ahead.length < concurrency && next <= last) {
      const page = list({ page: next++, pageSize });
      page.catch(() => undefined); // awaited in turn below; never an unhandled rejection
      ahead.push(page);
    }
  };
  fill();
  while (ahead.length > 0) {
    const page = await ahead.shift()!;
    fill();
    yield batchOf(page);
  }
}

/** The page's devices, with its unreadable ids beside them (on a copy: the page may be a cached answer). */
function batchOf(page: DevicePage): DeviceBatch<Device> {
  return page.unreadable === undefined ? page.data : Object.assign(page.data.slice(), { unreadable: page.unreadable });
}

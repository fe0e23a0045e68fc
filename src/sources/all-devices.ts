import { AppError } from '../errors.js';
import type { Device, DeviceBatch, DevicePage, DeviceQuery } from './types.js';

/** Pages of a source read a page at a time. */
export const devicePageSize = 1000;

/**
 * Every page of a numbered-page listing (an upstream's `GET /devices`) in order: page 1 tells
 * the total, the rest are fetched at most `concurrency` at a time (an upstream is never hit by
 * a burst) and handed on in order as they arrive, so no more than `concurrency` pages are held.
 * A page before the last that holds fewer than `pageSize` records (empty, or short) means the
 * listing is incomplete: it throws (502 `Upstream unavailable`, the details saying which page),
 * so a poll fails and is retried rather than taking the devices it lost for gone.
 */
export async function* numberedPages(
  list: (query: DeviceQuery) => Promise<DevicePage>,
  pageSize: number,
  concurrency = 4,
): AsyncGenerator<DeviceBatch<Device>> {
  const first = await list({ page: 1, pageSize });
  const last = Math.ceil(first.total / pageSize);
  yield complete(first, 1, last, pageSize);
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
  for (let number = 2; ahead.length > 0; number += 1) {
    const page = await ahead.shift()!;
    fill();
    yield complete(page, number, last, pageSize);
  }
}

/** The page as a batch, or an error when it is a page before the last and not full. */
function complete(page: DevicePage, number: number, last: number, pageSize: number): DeviceBatch<Device> {
  const records = page.listed ?? page.data.length;
  if (number < last && records < pageSize) {
    const message = `page ${number} of ${last} held ${records} devices, not ${pageSize} (total ${page.total}): the listing is incomplete`;
    throw new AppError('upstream_unavailable', 'Upstream unavailable', [{ path: 'page', message }]);
  }
  return batchOf(page);
}

/** The page's devices, with its unreadable ids beside them (on a copy: the page may be a cached answer). */
function batchOf(page: DevicePage): DeviceBatch<Device> {
  return page.unreadable === undefined ? page.data : Object.assign(page.data.slice(), { unreadable: page.unreadable });
}

import type { Device, DeviceSource, Principal } from './types.js';

/**
 * Every device the key may read, paging the source 1000 at a time: page 1 tells the total,
 * the rest follow at most `concurrency` at a time (an upstream is never hit by a burst).
 */
export async function allDevices(source: DeviceSource, principal: Principal, concurrency = 4): Promise<Device[]> {
  const pageSize = 1000;
  const first = await source.list(principal, { page: 1, pageSize });
  const pages: Device[][] = [first.data];
  let next = 2;
  const last = Math.ceil(first.total / pageSize);
  const worker = async () => {
    for (let page = next++; page <= last; page = next++) pages[page - 1] = (await source.list(principal, { page, pageSize })).data;
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, Math.max(0, last - 1)) }, worker));
  return pages.flat();
}

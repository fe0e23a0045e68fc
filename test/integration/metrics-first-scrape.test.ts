import { afterAll, expect, test } from '@jest/globals';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { scrape, type Samples } from '../helpers/metrics.js';

/**
 * `/metrics` right after start, and scraped again at once: every sample is a real number.
 * Alone in its file, so the process-wide default metrics are as fresh as in a new process
 * (jest gives each test file its own modules).
 */

let t: TestApp | undefined;
afterAll(async () => {
  await t?.close();
});

/**
 * Samples that are NaN, infinite, or a duration no process lived through: the empty event-loop
 * histogram's minimum is 2^63 − 1 ns, about 292 years.
 */
function unreal(samples: Samples): string[] {
  const sentinel = (name: string, value: number) => /_seconds(\{|$)/.test(name) && value >= 9e9;
  return [...samples].filter(([name, value]) => !Number.isFinite(value) || sentinel(name, value)).map(([name, value]) => `${name} ${value}`);
}

test('the first scrape after start and one right after it have no NaN, infinity or sentinel value', async () => {
  t = await buildTestApp();
  const first = await scrape(t.app);
  expect(first.samples.has('nodejs_eventloop_lag_min_seconds')).toBe(true);
  expect(unreal(first.samples)).toEqual([]);
  const second = await scrape(t.app);
  expect(unreal(second.samples)).toEqual([]);
  expect(second.text).not.toMatch(/ (NaN|[+-]Inf)$/m);
});

test('event-loop lag figures describe recorded delays: ordered and under a minute', async () => {
  await new Promise((resolve) => setTimeout(resolve, 100));
  const { samples } = await scrape(t!.app);
  const lag = (name: string) => samples.get(`nodejs_eventloop_lag_${name}_seconds`)!;
  expect(lag('min')).toBeLessThanOrEqual(lag('p50'));
  expect(lag('p50')).toBeLessThanOrEqual(lag('p99'));
  expect(lag('p99')).toBeLessThanOrEqual(lag('max'));
  expect(lag('max')).toBeGreaterThan(0);
  expect(lag('max')).toBeLessThan(60);
  expect(lag('stddev')).toBeGreaterThanOrEqual(0);
});

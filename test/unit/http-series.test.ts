import { expect, test } from '@jest/globals';
import { Registry } from 'prom-client';
import { HttpSeries } from '../../src/metrics/http-series.js';
import { parseSamples, sample } from '../helpers/metrics.js';

test('HTTP series: cumulative buckets with inclusive upper bounds, sum and count; unusual methods are "other"', async () => {
  const registry = new Registry();
  const series = new HttpSeries(registry, [0.01, 0.1]);
  for (const seconds of [0.005, 0.01, 0.05, 0.5]) series.record('/devices', 'GET', 200, seconds);
  series.record('/devices', 'PROPFIND', 404, 0.001);
  const samples = parseSamples(await registry.metrics());
  const get = { route: '/devices', method: 'GET', status: '200' };
  expect(sample(samples, 'http_requests_total', get)).toBe(4);
  expect(sample(samples, 'http_request_duration_seconds_bucket', { ...get, le: '0.01' })).toBe(2);
  expect(sample(samples, 'http_request_duration_seconds_bucket', { ...get, le: '0.1' })).toBe(3);
  expect(sample(samples, 'http_request_duration_seconds_bucket', { ...get, le: '+Inf' })).toBe(4);
  expect(sample(samples, 'http_request_duration_seconds_sum', get)).toBeCloseTo(0.565);
  expect(sample(samples, 'http_request_duration_seconds_count', get)).toBe(4);
  expect(sample(samples, 'http_requests_total', { route: '/devices', method: 'other', status: '404' })).toBe(1);
  expect(await registry.metrics()).toContain('# TYPE http_request_duration_seconds histogram');
});

import type { Registry } from 'prom-client';
import { registerCollector, type Sample } from './collector.js';

const methods = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

type HttpLabels = { route: string; method: string; status: string };

interface Series {
  labels: HttpLabels;
  count: number;
  sum: number;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  perBucket: number[];
}

/**
 * `http_requests_total` and `http_request_duration_seconds`, kept in one map on the request
 * path. prom-client's Counter and Histogram validate and hash their labels on every call
 * (~3 µs each, measured), which is about 2 % of a warm dropdown's CPU; here a request costs
 * one map look-up and a few additions, and the exposition is built at scrape time.
 */
export class HttpSeries {
  /** Route pattern → (status × 8 + method index) → series: no string is built per request. */
  private readonly routes = new Map<string, Map<number, Series>>();

  constructor(
    registry: Registry,
    private readonly bounds: number[],
  ) {
    const reset = () => this.routes.clear();
    const help = 'HTTP requests answered, by route pattern, method and status.';
    registerCollector(registry, { name: 'http_requests_total', help, type: 'counter' }, () => this.counterSamples(), reset);
    const name = 'http_request_duration_seconds';
    registerCollector(registry, { name, help: 'Time to answer an HTTP request.', type: 'histogram' }, () => this.histogramSamples(name), reset);
  }

  /** `method` outside the usual seven is counted as `other`. */
  record(route: string, method: string, status: number, seconds: number): void {
    let byCode = this.routes.get(route);
    if (!byCode) {
      byCode = new Map();
      this.routes.set(route, byCode);
    }
    const methodIndex = methods.indexOf(method);
    const code = status * 8 + (methodIndex < 0 ? methods.length : methodIndex);
    let series = byCode.get(code);
    if (!series) {
      const labels = { route, method: methodIndex < 0 ? 'other' : method, status: String(status) };
      series = { labels, count: 0, sum: 0, perBucket: new Array<number>(this.bounds.length + 1).fill(0) };
      byCode.set(code, series);
    }
    series.count += 1;
    series.sum += seconds;
    let bucket = 0;
    while (bucket < this.bounds.length && seconds > this.bounds[bucket]!) bucket += 1;
    series.perBucket[bucket]! += 1;
  }

  private all(): Series[] {
    return [...this.routes.values()].flatMap((byCode) => [...byCode.values()]);
  }

  private counterSamples(): Sample[] {
    return this.all().map((s) => ({ labels: s.labels, value: s.count }));
  }

  private histogramSamples(name: string): Sample[] {
    const samples: Sample[] = [];
    for (const s of this.all()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += s.perBucket[i]!;
        samples.push({ labels: { ...s.labels, le: bound }, value: cumulative, metricName: `${name}_bucket` });
      });
      samples.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: `${name}_bucket` });
      samples.push({ labels: s.labels, value: s.sum, metricName: `${name}_sum` });
      samples.push({ labels: s.labels, value: s.count, metricName: `${name}_count` });
    }
    return samples;
  }
}

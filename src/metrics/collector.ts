import type { Counter, Registry } from 'prom-client';

/** One line of the exposition: labels, value, and the suffixed name for histogram parts. */
export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * Registers a metric whose samples are built at scrape time from plain numbers kept elsewhere.
 * The registry reads any object with name, help, type and get(); its typings list only its
 * own classes, hence the cast.
 */
export function registerCollector(
  registry: Registry,
  meta: { name: string; help: string; type: 'counter' | 'histogram' },
  samples: () => Sample[],
  reset: () => void,
): void {
  const metric = { ...meta, aggregator: 'sum', get: async () => ({ ...meta, aggregator: 'sum', values: samples() }), reset };
  registry.registerMetric(metric as unknown as Counter);
}

export interface CounterHandle {
  inc(by?: number): void;
}

/**
 * A counter for the request path: a caller takes a handle for its label values once, and each
 * increment is one addition (prom-client's `inc` validates and hashes its labels every call,
 * a few microseconds, measured).
 */
export class HandleCounter {
  private readonly series = new Map<string, { labels: Record<string, string>; value: number }>();

  constructor(registry: Registry, name: string, help: string) {
    registerCollector(
      registry,
      { name, help, type: 'counter' },
      () => [...this.series.values()],
      () => {
        for (const s of this.series.values()) s.value = 0;
      },
    );
  }

  /** The same label values give the same series, however many handles are taken. */
  handle(labels: Record<string, string>): CounterHandle {
    const key = JSON.stringify(labels);
    let series = this.series.get(key);
    if (!series) {
      series = { labels, value: 0 };
      this.series.set(key, series);
    }
    const counted = series;
    return { inc: (by = 1) => void (counted.value += by) };
  }
}

import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Gauge, type Registry } from 'prom-client';

/**
 * Event-loop delay figures (`nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds`),
 * the names prom-client's default metrics use, measured between two scrapes.
 *
 * prom-client reads its delay histogram at every scrape and empties it. A histogram with no
 * sample yet — read right after it was enabled, or at a second scrape within one sampling
 * interval — reports its minimum as 2^63 − 1 ns and its mean and deviation as NaN, which
 * Prometheus stores as if they were measurements. Here the histogram runs from process start
 * (see `startEventLoopMonitor`), and a scrape that finds no new sample repeats the figures of
 * the last window that had some (zero before the first sample: no delay recorded).
 */
const figures = ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'] as const;
type Figure = (typeof figures)[number];

const help: Record<Figure, string> = {
  min: 'The minimum recorded event loop delay.',
  max: 'The maximum recorded event loop delay.',
  mean: 'The mean of the recorded event loop delays.',
  stddev: 'The standard deviation of the recorded event loop delays.',
  p50: 'The 50th percentile of the recorded event loop delays.',
  p90: 'The 90th percentile of the recorded event loop delays.',
  p99: 'The 99th percentile of the recorded event loop delays.',
};

export const eventLoopLagMetricNames = figures.map((figure) => `nodejs_eventloop_lag_${figure}_seconds`);

/** Sampling interval of the delay histogram (prom-client's default). */
const resolutionMs = 10;

let histogram: IntervalHistogram | undefined;
let last: Record<Figure, number> = { min: 0, max: 0, mean: 0, stddev: 0, p50: 0, p90: 0, p99: 0 };

/** Starts the process's one delay histogram (idempotent): the first scrape then has samples. */
export function startEventLoopMonitor(): void {
  if (histogram) return;
  histogram = monitorEventLoopDelay({ resolution: resolutionMs });
  histogram.enable();
}

/** The figures since the last read that had samples; empties the histogram when it had some. */
function readWindow(): Record<Figure, number> {
  startEventLoopMonitor();
  const h = histogram!;
  if (h.count === 0) return last;
  const seconds = (ns: number) => ns / 1e9;
  last = {
    min: seconds(h.min),
    max: seconds(h.max),
    mean: seconds(h.mean),
    stddev: seconds(h.stddev),
    p50: seconds(h.percentile(50)),
    p90: seconds(h.percentile(90)),
    p99: seconds(h.percentile(99)),
  };
  h.reset();
  return last;
}

/** Registers the seven gauges on `registry`; one read of the histogram per scrape fills them all. */
export function registerEventLoopLag(registry: Registry): void {
  const gauges = {} as Record<Figure, Gauge>;
  for (const figure of figures) {
    gauges[figure] = new Gauge({
      name: `nodejs_eventloop_lag_${figure}_seconds`,
      help: help[figure],
      registers: [registry],
      // The first gauge collected reads the window and sets the others.
      collect:
        figure === 'min'
          ? () => {
              const window = readWindow();
              for (const f of figures) gauges[f].set(window[f]);
            }
          : undefined,
    });
  }
}

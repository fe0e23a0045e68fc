import { collectDefaultMetrics, Counter, Registry } from 'prom-client';
import { eventLoopLagMetricNames, registerEventLoopLag } from './event-loop-lag.js';

let shared: Registry | undefined;

/**
 * The default process metrics (CPU, memory, event-loop lag, GC, handles). They describe the
 * process, not an app, so one registry serves every app in it: each `collectDefaultMetrics`
 * call starts its own event-loop monitor and GC observer, which a test run building dozens
 * of apps would otherwise pile up. Created at the first scrape: a process nobody scrapes pays
 * nothing for the GC observer (GC histograms count from then on; CPU and memory are totals,
 * see `cpuTotals`). The event-loop delay figures are measured from start instead (see
 * event-loop-lag.ts): prom-client's read an empty histogram at the first scrape.
 */
export function processRegistry(): Registry {
  if (!shared) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared });
    // Gauges named like counters, which `promtool check metrics` rejects; the same numbers are
    // in `nodejs_active_handles`, `nodejs_active_requests` and `nodejs_active_resources` by type.
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      shared.removeSingleMetric(name);
    }
    for (const name of eventLoopLagMetricNames) shared.removeSingleMetric(name);
    registerEventLoopLag(shared);
    cpuTotals(shared);
  }
  return shared;
}

/**
 * prom-client's CPU counters count from the moment they were registered (the first scrape
 * here), so the first scrape would read ~0 s. Prometheus means `process_cpu_*_seconds_total`
 * as the process's total since it started, which `process.cpuUsage()` gives directly.
 */
function cpuTotals(registry: Registry): void {
  const parts = { process_cpu_user_seconds_total: 'user', process_cpu_system_seconds_total: 'system', process_cpu_seconds_total: 'both' } as const;
  for (const [name, part] of Object.entries(parts)) {
    registry.removeSingleMetric(name);
    const help = {
      user: 'Total user CPU time spent in seconds.',
      system: 'Total system CPU time spent in seconds.',
      both: 'Total user and system CPU time spent in seconds.',
    }[part];
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        const usage = process.cpuUsage();
        const micros = part === 'user' ? usage.user : part === 'system' ? usage.system : usage.user + usage.system;
        this.reset();
        this.inc(micros / 1e6);
      },
    });
  }
}

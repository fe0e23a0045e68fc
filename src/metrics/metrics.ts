import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { processRegistry } from './process-metrics.js';
import { startEventLoopMonitor } from './event-loop-lag.js';
import { HttpSeries } from './http-series.js';
import { HandleCounter, type CounterHandle } from './collector.js';

/** How one upstream attempt ended (docs/service.md): an HTTP status class, or why there was none. */
export type UpstreamOutcome = 'ok' | 'http_3xx' | 'http_4xx' | 'http_5xx' | 'timeout' | 'network' | 'too_large' | 'invalid_body';
/** What a cached read served: a fresh copy, a load, or a stale copy (while refreshing, or on error). */
export type CacheResult = 'hit' | 'miss' | 'stale';
/** What one webhook attempt led to (the `outcome` of a delivery attempt). */
export const deliveryOutcomes = ['delivered', 'retrying', 'dead', 'disabled'] as const;
export type DeliveryOutcome = (typeof deliveryOutcomes)[number];
/** Queue states reported as depth: waiting for a first attempt, waiting for a retry, given up. */
export const queueStates = ['pending', 'retrying', 'dead'] as const;
export type QueueState = (typeof queueStates)[number];

/** What the database-backed gauges show, read once per scrape. */
export interface QueueStats {
  deliveries: Record<QueueState, number>;
  /** How long the delivery that has been due the longest has waited, in ms (0 when none is due). */
  oldestDueDeliveryMs: number;
  /** How far past its poll time the most overdue watched key is, in ms (0 when none is). */
  oldestOverdueKeyMs: number;
}

export interface PollRound {
  durationMs: number;
  keys: number;
  failed: number;
}

/**
 * The connector's Prometheus metrics, one set per app (a registry of its own, so tests that
 * build several apps never collide), beside the process-wide default metrics. Labels are closed
 * sets or route patterns: never a key, an id or a raw path. The database-backed gauges are
 * filled by `queueStats` at scrape time, so nothing polls the database between scrapes.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly http: HttpSeries;
  private readonly upstreamRequests: Counter<'area' | 'outcome'>;
  private readonly upstreamDuration: Histogram<'area' | 'outcome'>;
  private readonly upstreamRejected: Counter<'area' | 'resource'>;
  private readonly cacheLookups: HandleCounter;
  private readonly pollRounds: Counter;
  private readonly keysPolled: Counter<'outcome'>;
  private readonly pollDuration: Histogram;
  private readonly overdueKey: Gauge;
  private readonly deliveries: Counter<'outcome'>;
  private readonly deliveryDuration: Histogram<'outcome'>;
  private readonly queueDepth: Gauge<'state'>;
  private readonly oldestDue: Gauge;
  private readonly resends: Counter;
  private readonly recovers: Counter<'mode'>;
  private readonly recovered: Counter;
  private readonly tests: Counter<'outcome'>;

  constructor(private readonly queueStats?: () => Promise<QueueStats>) {
    startEventLoopMonitor();
    const registers = [this.registry];
    const counter = <L extends string>(name: string, help: string, labelNames: L[] = []) => new Counter<L>({ name, help, labelNames, registers });
    const histogram = <L extends string>(name: string, help: string, buckets: number[], labelNames: L[] = []) =>
      new Histogram<L>({ name, help, labelNames, buckets, registers });
    const gauge = <L extends string>(name: string, help: string, labelNames: L[] = []) => new Gauge<L>({ name, help, labelNames, registers });

    this.http = new HttpSeries(this.registry, [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]);
    this.upstreamRequests = counter('upstream_requests_total', 'Attempts of upstream calls (each retry counts), by area and outcome.', ['area', 'outcome']);
    this.upstreamRejected = counter(
      'upstream_records_rejected_total',
      'Records of upstream answers left out because they do not match the interface, by area and resource.',
      ['area', 'resource'],
    );
    this.upstreamDuration = histogram(
      'upstream_request_duration_seconds',
      'Time of one upstream attempt, by area and outcome.',
      [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      ['area', 'outcome'],
    );
    this.cacheLookups = new HandleCounter(this.registry, 'cache_lookups_total', 'Reads of a cache (option lists, upstream answers), by cache and result.');
    this.pollRounds = counter('poller_rounds_total', 'Device-status poll rounds completed.');
    this.keysPolled = counter('poller_keys_polled_total', 'Watched keys polled, by outcome (ok, failed).', ['outcome']);
    this.pollDuration = histogram(
      'poller_round_duration_seconds',
      'Time of one poll round over every due key.',
      [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    );
    this.overdueKey = gauge('poller_oldest_overdue_key_age_seconds', 'How far past its poll time the most overdue watched key is (0 = on time).');
    this.deliveries = counter('webhook_deliveries_total', 'Webhook delivery attempts, by outcome (delivered, retrying, dead, disabled).', ['outcome']);
    this.deliveryDuration = histogram(
      'webhook_delivery_duration_seconds',
      'Time of one webhook attempt, by outcome.',
      [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      ['outcome'],
    );
    this.queueDepth = gauge('webhook_queue_depth', 'Deliveries in the queue, by state (pending, retrying, dead).', ['state']);
    this.oldestDue = gauge('webhook_oldest_due_delivery_age_seconds', 'How long the delivery due the longest has waited (0 = none due).');
    this.resends = counter('webhook_resends_total', 'Deliveries resent through the API (POST /v1/hooks/{id}/deliveries/{delivery_id}/resend).');
    this.recovers = counter('webhook_recovers_total', 'Recovers asked for through the API, by mode (run, dry_run).', ['mode']);
    this.recovered = counter('webhook_recovered_deliveries_total', 'Deliveries queued again or made by recovers.');
    this.tests = counter('webhook_tests_total', 'Test deliveries sent through the API, by outcome (delivered, failed).', ['outcome']);
    // Known label values start at 0, so rate() and alerts see a series before the first event.
    for (const mode of ['run', 'dry_run']) this.recovers.inc({ mode }, 0);
    for (const outcome of ['delivered', 'failed']) this.tests.inc({ outcome }, 0);
    for (const outcome of deliveryOutcomes) this.deliveries.inc({ outcome }, 0);
    for (const outcome of ['ok', 'failed']) this.keysPolled.inc({ outcome }, 0);
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** `route` is a route pattern or `(unmatched)`, never the request's path. */
  httpRequest(route: string, method: string, status: number, seconds: number): void {
    this.http.record(route, method, status, seconds);
  }

  upstreamAttempt(area: 'device' | 'menu', outcome: UpstreamOutcome, seconds: number): void {
    this.upstreamRequests.inc({ area, outcome });
    this.upstreamDuration.observe({ area, outcome }, seconds);
  }

  /** Handles for one cache's hits, misses and stale answers, taken once (a cache read is the hot path). */
  upstreamRecordRejected(area: 'device' | 'menu', resource: string): void {
    this.upstreamRejected.inc({ area, resource });
  }

  cacheCounters(cache: string): Record<CacheResult, CounterHandle> {
    const handle = (result: CacheResult) => this.cacheLookups.handle({ cache, result });
    return { hit: handle('hit'), miss: handle('miss'), stale: handle('stale') };
  }

  pollRound(round: PollRound): void {
    this.pollRounds.inc();
    this.keysPolled.inc({ outcome: 'ok' }, round.keys - round.failed);
    this.keysPolled.inc({ outcome: 'failed' }, round.failed);
    this.pollDuration.observe(round.durationMs / 1000);
  }

  /** An operator's repair of a hook (docs/webhooks.md, "When something goes wrong"). */
  hookOperation(operation: 'resend' | 'recover' | 'recover_dry_run' | 'test_delivered' | 'test_failed'): void {
    if (operation === 'resend') this.resends.inc();
    else if (operation.startsWith('recover')) this.recovers.inc({ mode: operation === 'recover' ? 'run' : 'dry_run' });
    else this.tests.inc({ outcome: operation === 'test_delivered' ? 'delivered' : 'failed' });
  }

  /** Deliveries a recover queued again or made. */
  recoveredDeliveries(count: number): void {
    this.recovered.inc(count);
  }

  deliveryOutcome(outcome: DeliveryOutcome, durationMs: number): void {
    this.deliveries.inc({ outcome });
    this.deliveryDuration.observe({ outcome }, durationMs / 1000);
  }

  /** The text exposition: process metrics, then the app's, with the gauges read now. */
  async render(): Promise<string> {
    await this.refreshQueueGauges();
    return `${await processRegistry().metrics()}\n${await this.registry.metrics()}`;
  }

  private async refreshQueueGauges(): Promise<void> {
    if (!this.queueStats) return;
    let stats: QueueStats;
    try {
      stats = await this.queueStats();
    } catch {
      // No reading (e.g. the database is unavailable): no samples rather than stale ones.
      for (const gauge of [this.queueDepth, this.oldestDue, this.overdueKey]) gauge.reset();
      return;
    }
    for (const state of queueStates) this.queueDepth.set({ state }, stats.deliveries[state]);
    this.oldestDue.set(stats.oldestDueDeliveryMs / 1000);
    this.overdueKey.set(stats.oldestOverdueKeyMs / 1000);
  }
}

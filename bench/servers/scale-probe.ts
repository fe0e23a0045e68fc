import { readFileSync } from 'node:fs';
import { serveChild } from '../lib/child.js';

/**
 * Child process of the `scale` row: watches a running service from outside, in a process of its
 * own so that nothing the row does (writing heartbeats, receiving deliveries) delays a probe.
 * Once started it keeps, until `finish`:
 * - `/healthz` every `everyMs` (one at a time: a stalled answer is one long sample);
 * - a small account's request every `everyMs`, going round the small keys and four requests
 *   (device dropdown, menu dropdown, group dropdown, `GET /devices?page_size=20`);
 * - a scrape of `/metrics` every `scrapeEveryMs`, as Prometheus would: event-loop lag p99 and
 *   max of the window since the last scrape, resident memory, poll rounds;
 * - the service's resident memory from /proc/<pid>/status every `rssEveryMs`.
 * `finish` stops them, waits for requests in flight and returns every sample.
 */
export interface ProbeOptions {
  url: string;
  pid: number;
  smallKeys: string[];
  smallMenuIds: string[];
  everyMs: number;
  scrapeEveryMs: number;
  rssEveryMs: number;
  timeoutMs: number;
}

export interface RequestSample {
  at: number;
  kind: 'healthz' | 'small';
  what: string;
  ms: number;
  status: number;
}

export interface Scrape {
  at: number;
  lagP99: number;
  lagMax: number;
  rss: number;
  pollSum: number;
  pollCount: number;
  overdue: number;
  pending: number;
  /** poller_keys_polled_total{outcome="failed"}: polls that failed since the start. */
  failedPolls: number;
}

export interface ProbeSamples {
  requests: RequestSample[];
  scrapes: Scrape[];
  rss: Array<{ at: number; rss: number }>;
}

/** One sample of a metric in the Prometheus text format (NaN when absent). */
export function metricValue(text: string, name: string, labels = ''): number {
  const prefix = `${name}${labels ? `{${labels}}` : ''} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : NaN;
}

await serveChild<ProbeOptions, Record<string, never>>(async (o) => {
  const samples: ProbeSamples = { requests: [], scrapes: [], rss: [] };
  let running = false;
  const loops: Promise<void>[] = [];
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  const timed = async (kind: RequestSample['kind'], what: string, path: string, headers: Record<string, string> = {}): Promise<string> => {
    const at = Date.now();
    const t0 = performance.now();
    let status: number;
    let body = '';
    try {
      const res = await fetch(`${o.url}${path}`, { headers, signal: AbortSignal.timeout(o.timeoutMs) });
      body = await res.text();
      status = res.status;
    } catch {
      status = 0; // timed out or refused: the sample is the time waited
    }
    samples.requests.push({ at, kind, what, ms: performance.now() - t0, status });
    return body;
  };

  const every = (ms: number, step: (n: number) => Promise<void> | void) => {
    loops.push(
      (async () => {
        for (let n = 0; running; n += 1) {
          const t0 = performance.now();
          await step(n);
          await sleep(Math.max(0, ms - (performance.now() - t0)));
        }
      })(),
    );
  };

  const smallRequests = (account: number): Array<[string, string, Record<string, string>]> => {
    const key = o.smallKeys[account]!;
    return [
      ['device dropdown', '/v1/devices/options', { 'x-api-key': key }],
      ['menu dropdown', '/v1/menus/options', { 'x-api-key': key }],
      ['group dropdown', `/v1/menus/${o.smallMenuIds[account]}/groups/options`, { 'x-api-key': key }],
      ['GET /devices', '/devices?page_size=20', { authorization: `Bearer ${key}` }],
    ];
  };

  const start = () => {
    if (running) return false;
    running = true;
    every(o.everyMs, () => timed('healthz', 'healthz', '/healthz').then(() => undefined));
    every(o.everyMs, (n) => {
      const account = n % o.smallKeys.length;
      const requests = smallRequests(account);
      const [what, path, headers] = requests[Math.floor(n / o.smallKeys.length) % requests.length]!;
      return timed('small', what, path, headers).then(() => undefined);
    });
    every(o.scrapeEveryMs, async () => {
      const at = Date.now();
      const text = await fetch(`${o.url}/metrics`, { signal: AbortSignal.timeout(o.timeoutMs) }).then(
        (r) => r.text(),
        () => '',
      );
      if (!text) return;
      samples.scrapes.push({
        at,
        lagP99: metricValue(text, 'nodejs_eventloop_lag_p99_seconds') * 1000,
        lagMax: metricValue(text, 'nodejs_eventloop_lag_max_seconds') * 1000,
        rss: metricValue(text, 'process_resident_memory_bytes'),
        pollSum: metricValue(text, 'poller_round_duration_seconds_sum') * 1000,
        pollCount: metricValue(text, 'poller_round_duration_seconds_count'),
        overdue: metricValue(text, 'poller_oldest_overdue_key_age_seconds') * 1000,
        pending: metricValue(text, 'webhook_queue_depth', 'state="pending"'),
        failedPolls: metricValue(text, 'poller_keys_polled_total', 'outcome="failed"'),
      });
    });
    every(o.rssEveryMs, () => {
      try {
        const kb = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${o.pid}/status`, 'utf8'))?.[1];
        if (kb) samples.rss.push({ at: Date.now(), rss: Number(kb) * 1024 });
      } catch {
        // no /proc, or the service is gone
      }
    });
    return true;
  };

  const finish = async (): Promise<ProbeSamples> => {
    running = false;
    await Promise.all(loops.splice(0));
    return samples;
  };

  return { info: {}, handlers: { start, finish }, close: async () => void (await finish()) };
});

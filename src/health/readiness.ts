import type { Db } from '../db/database.js';
import type { UpstreamClient } from '../upstream/client.js';

/** An upstream that answered anything within this long counts as answering without a probe. */
const recentAnswerMs = 60_000;
/** /readyz waits this long for each check (the database, each upstream) before calling it not answering. */
const readinessTimeoutMs = 2000;

/**
 * Named checks for `/readyz`: `ok` or what is wrong. Every check at once, each bounded: the
 * answer comes within readinessTimeoutMs whatever the database and the upstreams do
 * (docs/service.md). An upstream is checked only when one is configured.
 */
export function readinessChecks(db: Db, upstreams: { device: UpstreamClient | null; menu: UpstreamClient | null }): () => Promise<Record<string, string>> {
  const bounded = (work: Promise<boolean>, failed: string) =>
    withTimeout(work, readinessTimeoutMs).then(
      (ok) => (ok ? 'ok' : failed),
      (err: unknown) => (err instanceof TimeoutError ? 'not answering' : failed),
    );
  const upstream = (client: UpstreamClient, probePath: string) =>
    bounded(client.sinceLastAnswer() < recentAnswerMs ? Promise.resolve(true) : client.probe(probePath), 'not answering');
  return async () => {
    const checks: Array<[string, Promise<string>]> = [
      [
        'database',
        bounded(
          db.ping().then(() => true),
          'unavailable',
        ),
      ],
    ];
    if (upstreams.device) checks.push(['device_upstream', upstream(upstreams.device, '/devices?page_size=1')]);
    if (upstreams.menu) checks.push(['menu_upstream', upstream(upstreams.menu, '/v1/menus')]);
    return Object.fromEntries(await Promise.all(checks.map(async ([name, check]) => [name, await check] as const)));
  };
}

class TimeoutError extends Error {}

function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError()), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

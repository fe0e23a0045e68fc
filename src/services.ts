import { embeddedKeyVerifier } from './auth/embedded-keys.js';
import { FailedAttempts } from './auth/failed-attempts.js';
import { CachedLoader } from './cache/cached-loader.js';
import { AppError } from './errors.js';
import { loadManifest } from './manifest/load.js';
import { OptionsService } from './options/service.js';
import { DatabaseDeviceOptions } from './options/database-options.js';
import { embeddedDeviceOptions } from './sources/embedded-device-options.js';
import { DatabaseGroupOptions } from './options/database-group-options.js';
import { embeddedGroupOptions } from './sources/embedded-group-options.js';
import { embeddedDeviceSource } from './sources/embedded-devices.js';
import { embeddedMenuSource } from './sources/embedded-menus.js';
import { upstreamDeviceSource } from './sources/upstream-devices.js';
import { upstreamMenuSource } from './sources/upstream-menus.js';
import { UpstreamClient } from './upstream/client.js';
import { KeyVerdicts, upstreamKeyVerifier } from './upstream/key-verdicts.js';
import { connectorSecretBox } from './crypto/secret-box.js';
import { SnapshotStore } from './triggers/snapshots.js';
import { EventLog } from './triggers/event-log.js';
import { DeviceStatusPoller } from './triggers/poller.js';
import { WatchStore } from './triggers/watches.js';
import { HookStore, hookWrites } from './webhooks/hook-store.js';
import { queueDeliveries } from './webhooks/fan-out.js';
import { dropDeliveriesOfEvents } from './webhooks/attempt-log.js';
import { HookOperations } from './webhooks/hook-operations.js';
import { OperationalEvents } from './webhooks/operational-events.js';
import { RetentionSweeper } from './webhooks/retention.js';
import { WebhookDeliverer } from './webhooks/deliverer.js';
import { DeliveryQueue } from './webhooks/delivery-queue.js';
import { httpWebhookSender } from './webhooks/sender.js';
import { targetPolicy } from './webhooks/target-guard.js';
import { Metrics } from './metrics/metrics.js';
import { queueStats } from './metrics/queue-stats.js';
import { KeyStore } from './auth/key-store.js';
import { CatalogDirectory } from './auth/catalog-directory.js';
import { KeyUsage } from './auth/key-usage.js';
import { keyLimits } from './auth/key-limits.js';
import { RateLimiter } from './auth/rate-limiter.js';
import { MemoryRateLimitStore, RateLimitStore } from './auth/rate-limit-store.js';

export type { ServiceDeps, Services } from './service-types.js';
import type { ServiceDeps, Services } from './service-types.js';

const recentAnswerMs = 60_000;
/** /readyz waits this long for each check (the database, each upstream) before calling it not answering. */
const readinessTimeoutMs = 2000;
/** How often this replica forgets ended failed-attempt windows. */
const housekeepingMs = 60_000;

/** The composition root: picks embedded or upstream per area and wires caches around them. */
export function buildServices(deps: ServiceDeps): Services {
  const { config, logger, clock, db } = deps;
  const verdicts = new KeyVerdicts(clock, config.OPTIONS_CACHE_TTL_MS);
  // The queue gauges read the database at scrape time (the poller exists by then).
  const metrics: Metrics = new Metrics(() => queueStats(deliveryQueue, watches)());
  const embeddedVerify = embeddedKeyVerifier(db, clock);
  const client = (area: 'device' | 'menu', baseUrl: string | undefined) =>
    baseUrl
      ? new UpstreamClient({
          baseUrl,
          area,
          timeoutMs: config.UPSTREAM_TIMEOUT_MS,
          retries: config.UPSTREAM_RETRIES,
          logger,
          clock,
          fetch: deps.fetch,
          metrics,
        })
      : null;
  const deviceClient = client('device', config.DEVICE_API_URL);
  const menuClient = client('menu', config.MENU_API_URL);
  const cache = (name: string, ttlMs: number, staleWhileRevalidate = true) =>
    new CachedLoader({ clock, logger, ttlMs, staleWhileRevalidate, metrics: { metrics, name } });

  // Raw sources feed option lists (which have their own cache); routes get cached ones.
  const rawDevices = deviceClient ? upstreamDeviceSource(deviceClient, verdicts) : embeddedDeviceSource(db, clock, config.HEARTBEAT_TIMEOUT_MS);
  const rawMenus = menuClient ? upstreamMenuSource(menuClient, verdicts) : embeddedMenuSource(db);
  const devices = deviceClient ? upstreamDeviceSource(deviceClient, verdicts, cache('devices', config.DEVICE_CACHE_TTL_MS)) : rawDevices;
  const menus = menuClient ? upstreamMenuSource(menuClient, verdicts, cache('menus', config.OPTIONS_CACHE_TTL_MS)) : rawMenus;
  const upstreamVerify = upstreamKeyVerifier(verdicts);
  const box = connectorSecretBox(config, logger);
  // The watches and the event log reach the key's hooks and deliveries through these (webhooks/ sits above triggers/).
  const watches = new WatchStore(db, box, clock, hookWrites);
  const eventLog = new EventLog(db, clock, { queue: queueDeliveries, dropOfEvents: dropDeliveriesOfEvents }, logger);
  const deliveryQueue = new DeliveryQueue(db, clock, (records) => operationalEvents.notice(records));
  const failedAttempts = new FailedAttempts(db, clock);
  const keyStore = new KeyStore(db, clock);
  // Shared through PostgreSQL by every replica; in this process for SQLite, which one process serves (docs/keys.md).
  const rateLimits = db.engine === 'postgres' ? new RateLimitStore(db) : new MemoryRateLimitStore();
  // Upstream keys have no id here: their use is the upstream's to record.
  const keyUsage = new KeyUsage(clock, (uses) => keyStore.recordUse(uses), logger);
  const limits = keyLimits(new RateLimiter(rateLimits, clock, logger), config.RATE_LIMIT_PER_MINUTE, keyUsage);
  const targets = targetPolicy(config.WEBHOOK_ALLOW_PRIVATE_TARGETS, config.WEBHOOK_ALLOWED_TARGETS);
  const send = deps.sendWebhook ?? httpWebhookSender(config.WEBHOOK_TIMEOUT_MS, targets);
  const deliverer = new WebhookDeliverer({
    queue: deliveryQueue,
    clock,
    logger,
    box,
    send,
    retryScheduleMs: config.WEBHOOK_RETRY_SCHEDULE_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    perTargetConcurrency: config.WEBHOOK_TARGET_CONCURRENCY,
    metrics,
  });
  const hooks = new HookStore(db, box, clock, config.WEBHOOK_MAX_HOOKS_PER_KEY, config.WEBHOOK_SECRET_OVERLAP_MS);
  const operationalEvents = new OperationalEvents(db, clock, logger, () => deliverer.wake());
  const hookOps = new HookOperations({ db, clock, logger, box, hooks, send, wake: () => deliverer.wake(), metrics });
  const snapshots = new SnapshotStore(db);
  const retention = new RetentionSweeper({ db, clock, logger, queue: deliveryQueue, log: eventLog, hooks, snapshots, intervalMs: config.POLL_INTERVAL_MS });
  const poller = new DeviceStatusPoller({
    db,
    clock,
    logger,
    devices: rawDevices,
    watches,
    log: eventLog,
    snapshots,
    heartbeatTimeoutMs: config.HEARTBEAT_TIMEOUT_MS,
    intervalMs: config.POLL_INTERVAL_MS,
    // Longer than one poll can take (every attempt of a page timing out), so a slow poll is
    // not taken over by another replica while it runs.
    leaseMs: config.POLL_INTERVAL_MS + config.UPSTREAM_TIMEOUT_MS * (config.UPSTREAM_RETRIES + 1),
    onEvents: () => deliverer.wake(),
    metrics,
  });

  let housekeeping: NodeJS.Timeout | null = null;
  const stopping = new Set<string>();
  const stopPart = async (name: string, stop: () => Promise<void>) => {
    stopping.add(name);
    try {
      await stop();
    } finally {
      stopping.delete(name);
    }
  };
  return {
    config,
    logger,
    clock,
    db,
    manifest: deps.manifest ?? loadManifest(),
    devices,
    menus,
    keys: {
      device: deviceClient ? upstreamVerify : embeddedVerify,
      menu: menuClient ? upstreamVerify : embeddedVerify,
      me: menuClient || deviceClient ? upstreamVerify : embeddedVerify,
    },
    async confirmKey(principal) {
      try {
        if (menuClient) await menus.listMenus(principal);
        else await devices.list(principal, { page: 1, pageSize: 1 });
      } catch (err) {
        // A 403 still means the upstream knows the key.
        if (!(err instanceof AppError && err.code === 'invalid_scopes')) throw err;
      }
    },
    async confirmDeviceKey(principal) {
      if (principal.scopes === null) await devices.list(principal, { page: 1, pageSize: 1 });
    },
    options: new OptionsService(
      { devices: rawDevices, menus: rawMenus },
      {
        menu: cache('menu_options', config.OPTIONS_CACHE_TTL_MS, menuClient !== null),
        device: cache('device_options', config.DEVICE_CACHE_TTL_MS, deviceClient !== null),
      },
      {
        devices: deviceClient ? undefined : new DatabaseDeviceOptions(embeddedDeviceOptions(db)),
        groups: menuClient ? undefined : new DatabaseGroupOptions(embeddedGroupOptions(db)),
      },
    ),
    failedAttempts,
    keyStore,
    directory: new CatalogDirectory(db),
    keyLimits: limits,
    watches,
    eventLog,
    poller,
    retention,
    hooks,
    deliverer,
    deliveryQueue,
    hookOps,
    targets,
    metrics,
    start() {
      poller.start();
      deliverer.start();
      retention.start();
      housekeeping = setInterval(() => {
        const skipped = (err: unknown) => logger.debug({ err: (err as Error).message }, 'housekeeping skipped');
        void failedAttempts.prune().catch(skipped);
        void rateLimits.prune(clock.now()).catch(skipped);
        void keyUsage.flush();
      }, housekeepingMs);
      housekeeping.unref();
    },
    async readiness() {
      // Every check at once, each bounded: the answer comes within readinessTimeoutMs whatever
      // the database and the upstreams do (docs/service.md).
      const bounded = (work: Promise<boolean>, failed: string) =>
        withTimeout(work, readinessTimeoutMs).then(
          (ok) => (ok ? 'ok' : failed),
          (err: unknown) => (err instanceof TimeoutError ? 'not answering' : failed),
        );
      const upstream = (c: UpstreamClient, probePath: string) =>
        bounded(c.sinceLastAnswer() < recentAnswerMs ? Promise.resolve(true) : c.probe(probePath), 'not answering');
      const checks: Array<[string, Promise<string>]> = [
        [
          'database',
          bounded(
            db.ping().then(() => true),
            'unavailable',
          ),
        ],
      ];
      if (deviceClient) checks.push(['device_upstream', upstream(deviceClient, '/devices?page_size=1')]);
      if (menuClient) checks.push(['menu_upstream', upstream(menuClient, '/v1/menus')]);
      return Object.fromEntries(await Promise.all(checks.map(async ([name, check]) => [name, await check] as const)));
    },
    async close(requestGraceMs = 0) {
      if (housekeeping) clearInterval(housekeeping);
      // Together: the deliverer stops sending while the polls wind down, not after.
      await Promise.all([
        stopPart('poller', () => poller.stop(requestGraceMs)),
        stopPart('deliverer', () => deliverer.stop()),
        stopPart('recovers', () => hookOps.stop()),
        stopPart('retention', () => retention.stop()),
      ]);
      // The last minute's key uses, before the database closes.
      await keyUsage.flush();
    },
    stillStopping: () => [...stopping],
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

import { embeddedKeyVerifier } from './auth/embedded-keys.js';
import { FailedAttempts } from './auth/failed-attempts.js';
import { CachedLoader } from './cache/cached-loader.js';
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
import { SqliteWatchQueue } from './triggers/sqlite-watch-queue.js';
import type { WatchQueue } from './triggers/watch-queue.js';
import { PostgresWatchQueue } from './triggers/postgres-watch-queue.js';
import { HookStore, hookWrites } from './webhooks/hook-store.js';
import { queueDeliveries, queueDeliveriesSql } from './webhooks/fan-out.js';
import { dropDeliveriesOfEvents } from './webhooks/attempt-log.js';
import { HookOperations } from './webhooks/hook-operations.js';
import { OperationalEvents } from './webhooks/operational-events.js';
import { RetentionSweeper } from './webhooks/retention.js';
import { WebhookDeliverer } from './webhooks/deliverer.js';
import { PollPressure } from './background/poll-pressure.js';
import { pollTickMs } from './triggers/poller-options.js';
import { DeliveryQueue } from './webhooks/delivery-queue.js';
import { SqliteDeliveryStore } from './webhooks/sqlite-delivery-store.js';
import type { DeliveryStore } from './webhooks/delivery-store.js';
import { PostgresDeliveryStore } from './webhooks/postgres-delivery-store.js';
import { httpWebhookSender } from './webhooks/sender.js';
import { targetPolicy } from './webhooks/target-guard.js';
import { Metrics } from './metrics/metrics.js';
import { queueStats } from './metrics/queue-stats.js';
import { KeyStore } from './auth/key-store.js';
import { CatalogDirectory } from './auth/catalog-directory.js';
import { KeyUsage } from './auth/key-usage.js';
import { keyLimits } from './auth/key-limits.js';
import { RateLimiter } from './auth/rate-limiter.js';
import { MemoryRateLimitStore, RateLimitStore, type RateLimitBuckets } from './auth/rate-limit-store.js';
import { byEngine } from './db/engine.js';
import { keyHousekeeping } from './auth/housekeeping.js';
import { Lifecycle } from './background/lifecycle.js';
import { readinessChecks } from './health/readiness.js';
import { keyConfirmation } from './sources/key-confirmation.js';

export type { ServiceDeps, Services } from './service-types.js';
import type { ServiceDeps, Services } from './service-types.js';

/**
 * The composition root: picks embedded or upstream per area, wires caches around them and
 * hands each part what it needs; the behaviour lives in the parts' own folders.
 */
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
  // Each queue's engine-specific store, picked once here (the domain code never asks for the engine).
  const watchQueue = byEngine<WatchQueue>(db.engine, { sqlite: () => new SqliteWatchQueue(db), postgres: () => new PostgresWatchQueue(db) });
  const deliveryStore = byEngine<DeliveryStore>(db.engine, { sqlite: () => new SqliteDeliveryStore(db), postgres: () => new PostgresDeliveryStore(db) });
  const watches = new WatchStore(
    db,
    box,
    clock,
    {
      pauseKey: (trx, keyHash, reason) => operationalEvents.pauseKey(trx, keyHash, reason),
      resumeKey: hookWrites.resumeKey,
      paused: () => deliverer.wake(),
    },
    watchQueue,
  );
  const eventLog = new EventLog(
    db,
    clock,
    {
      queue: queueDeliveries,
      // PostgreSQL: a poll's record is one statement, its fan-out in SQL (triggers/poll-record.ts).
      queueSql: byEngine<typeof queueDeliveriesSql | undefined>(db.engine, { sqlite: () => undefined, postgres: () => queueDeliveriesSql }),
      dropOfEvents: dropDeliveriesOfEvents,
    },
    logger,
  );
  const deliveryQueue = new DeliveryQueue(db, deliveryStore, clock, (records) => operationalEvents.notice(records));
  const failedAttempts = new FailedAttempts(db, clock);
  const keyStore = new KeyStore(db, clock);
  // Shared through PostgreSQL by every replica; in this process for SQLite, which one process serves (docs/keys.md).
  const rateLimits = byEngine<RateLimitBuckets>(db.engine, { sqlite: () => new MemoryRateLimitStore(), postgres: () => new RateLimitStore(db) });
  // Upstream keys have no id here: their use is the upstream's to record.
  const keyUsage = new KeyUsage(clock, (uses) => keyStore.recordUse(uses), logger);
  const limits = keyLimits(new RateLimiter(rateLimits, clock, logger), config.RATE_LIMIT_PER_MINUTE, keyUsage);
  const targets = targetPolicy(config.WEBHOOK_ALLOW_PRIVATE_TARGETS, config.WEBHOOK_ALLOWED_TARGETS);
  const send = deps.sendWebhook ?? httpWebhookSender(config.WEBHOOK_TIMEOUT_MS, targets);
  // Behind: a poll started a tenth of an interval late (at least a tick and a quarter: an idle
  // poller's polls start up to a tick late; with two ticks the deliverer sent at full speed through
  // a mass outage's first 2.5 s while the polls fell behind, docs/benchmarks.md).
  const pollPressure = deps.pollPressure ?? new PollPressure(Math.max(0.1 * config.POLL_INTERVAL_MS, 1.25 * pollTickMs(config.POLL_INTERVAL_MS)));
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
    yieldTo: () => pollPressure.behind,
  });
  const hooks = new HookStore(db, box, clock, config.WEBHOOK_MAX_HOOKS_PER_KEY, config.WEBHOOK_SECRET_OVERLAP_MS);
  const operationalEvents = new OperationalEvents(db, clock, logger, () => deliverer.wake());
  const hookOps = new HookOperations({
    db,
    clock,
    logger,
    box,
    hooks,
    send,
    wake: () => deliverer.wake(),
    metrics,
    retryScheduleLength: config.WEBHOOK_RETRY_SCHEDULE_MS.length,
  });
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
    pressure: pollPressure,
  });

  // Stopped together (docs/service.md, shutdown); the last minute's key uses are written before the database closes.
  const lifecycle = new Lifecycle(
    [
      { name: 'poller', start: () => poller.start(), stop: (requestGraceMs) => poller.stop(requestGraceMs) },
      { name: 'deliverer', start: () => deliverer.start(), stop: () => deliverer.stop() },
      { name: 'recovers', start: () => undefined, stop: () => hookOps.stop() },
      { name: 'retention', start: () => retention.start(), stop: () => retention.stop() },
      keyHousekeeping({ failedAttempts, rateLimits, keyUsage, clock, logger }),
    ],
    () => keyUsage.flush(),
  );
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
    ...keyConfirmation(devices, menus),
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
    start: () => lifecycle.start(),
    readiness: readinessChecks(db, { device: deviceClient, menu: menuClient }),
    close: (requestGraceMs = 0) => lifecycle.stop(requestGraceMs),
    stillStopping: () => lifecycle.stillStopping(),
  };
}

import type { Logger } from 'pino';
import type { Config } from './config.js';
import type { Db } from './db/database.js';
import type { Clock } from './time/timestamps.js';
import type { DeviceSource, MenuSource, Principal } from './sources/types.js';
import type { KeyVerifier } from './auth/embedded-keys.js';
import type { FailedAttempts } from './auth/failed-attempts.js';
import type { Manifest } from './manifest/schema.js';
import type { OptionsService } from './options/service.js';
import type { EventLog } from './triggers/event-log.js';
import type { DeviceStatusPoller } from './triggers/poller.js';
import type { WatchStore } from './triggers/watches.js';
import type { HookStore } from './webhooks/hook-store.js';
import type { HookOperations } from './webhooks/hook-operations.js';
import type { RetentionSweeper } from './webhooks/retention.js';
import type { WebhookDeliverer } from './webhooks/deliverer.js';
import type { DeliveryQueue } from './webhooks/delivery-queue.js';
import type { WebhookSender } from './webhooks/sender.js';
import type { TargetPolicy } from './webhooks/target-guard.js';
import type { Metrics } from './metrics/metrics.js';
import type { KeyStore } from './auth/key-store.js';
import type { CatalogDirectory } from './auth/catalog-directory.js';
import type { KeyLimits } from './auth/key-limits.js';
import type { PollPressure } from './background/poll-pressure.js';

/** Everything routes need, built once and handed to `createApp`. */
export interface Services {
  config: Config;
  logger: Logger;
  clock: Clock;
  db: Db;
  manifest: Manifest;
  /** The device and menu areas as routes serve them (upstream answers cached per key). */
  devices: DeviceSource;
  menus: MenuSource;
  /** Key verification per area (embedded looks keys up, upstream defers to the upstream); `me` for `/v1/me`. */
  keys: { device: KeyVerifier; menu: KeyVerifier; me: KeyVerifier };
  /** Upstream mode: asks the upstream whether it accepts a key (throws its 401). */
  confirmKey(principal: Principal): Promise<void>;
  /**
   * Upstream mode: asks the device upstream whether the key may read devices (cached like any
   * device read), before the connector serves its own state (events, hooks) to that key.
   */
  confirmDeviceKey(principal: Principal): Promise<void>;
  options: OptionsService;
  failedAttempts: FailedAttempts;
  /** The embedded catalog's keys and their lifecycle (docs/keys.md): the operator API and `npm run keys`. */
  keyStore: KeyStore;
  /** The embedded catalog's accounts and users, for the operator API. */
  directory: CatalogDirectory;
  /** The per-key rate limit and record of use, applied to every request with a good key. */
  keyLimits: KeyLimits;
  watches: WatchStore;
  eventLog: EventLog;
  poller: DeviceStatusPoller;
  /** The 7-day retention sweep, a loop of its own (docs/webhooks.md, "Retention"). */
  retention: RetentionSweeper;
  hooks: HookStore;
  deliverer: WebhookDeliverer;
  deliveryQueue: DeliveryQueue;
  /** Test, resend, recover, and a hook's deliveries (docs/webhooks.md, "When something goes wrong"). */
  hookOps: HookOperations;
  /** Which webhook targets are accepted besides public https ones, at subscribe and at delivery. */
  targets: TargetPolicy;
  /** This app's Prometheus metrics (`GET /metrics`). */
  metrics: Metrics;
  /** Starts background work: the device-status poller and the webhook deliverer. */
  start(): void;
  /** Named checks for `/readyz`: `ok` or what is wrong. */
  readiness(): Promise<Record<string, string>>;
  /**
   * Stops background work (docs/service.md, shutdown): polls end at their next page, unrecorded;
   * a request's own poll gets `requestGraceMs` (the requests' grace period, default none) first;
   * unsent deliveries are handed back; those in flight are awaited. The caller closes the
   * database afterwards.
   */
  close(requestGraceMs?: number): Promise<void>;
  /** What `close` is still waiting for ("poller", "deliverer"), for the shutdown log. */
  stillStopping(): string[];
}

export interface ServiceDeps {
  config: Config;
  logger: Logger;
  clock: Clock;
  db: Db;
  /** Defaults to manifests/connector.json. */
  manifest?: Manifest;
  /** Injected HTTP client for upstream calls (tests); defaults to global fetch. */
  fetch?: typeof fetch;
  /** Injected webhook sender; defaults to HTTP with the target guard. */
  sendWebhook?: WebhookSender;
  /** Injected (tests): whether the poller is behind, which the deliverer yields to; defaults to PollPressure. */
  pollPressure?: Pick<PollPressure, 'behind' | 'pollStarted'>;
}

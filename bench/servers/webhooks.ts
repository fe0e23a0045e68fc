import { enrolKey } from '../../src/triggers/device-triggers.js';
import { serveChild, type Handlers } from '../lib/child.js';
import { openConnector } from '../lib/connector.js';
import { benchDeviceId, benchPrincipal, deviceDataset, setHeartbeats } from '../lib/devices.js';

/**
 * Child process of row 4 (webhooks): a connector in embedded mode over `devices` generated
 * devices of one key, on a SQLite file in a temp folder, logging at `info`, with
 * WEBHOOK_ALLOW_PRIVATE_TARGETS=true (the receivers are on 127.0.0.1) and POLL_INTERVAL_MS as
 * given. Nothing runs until the row says so: `startDeliverer`, `startPoller`, `poll`.
 * Device status changes are made the way a real device makes them: by its heartbeat in the
 * catalog (`setHeartbeats`, `scheduleOffline`).
 */
export interface WebhooksOptions {
  devices: number;
  pollIntervalMs: number;
  heartbeatTimeoutMs: number;
}

export interface PollDone {
  ms: number;
  events: number;
  /** Date.now() when the poll (and its transaction) had finished. */
  doneAt: number;
}

export interface EventRow {
  id: string;
  device_id: string;
  type: string;
  occurred_at: string;
  created_at: number;
}

await serveChild<WebhooksOptions, Record<string, never>>(async (options) => {
  const stack = openConnector({
    label: 'webhooks',
    dataset: deviceDataset(options.devices),
    env: {
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      POLL_INTERVAL_MS: String(options.pollIntervalMs),
      HEARTBEAT_TIMEOUT_MS: String(options.heartbeatTimeoutMs),
    },
  });
  const { services, db } = stack;
  const principal = benchPrincipal('embedded', 'bench-enrol');
  const handlers: Handlers = {
    enrol: async () => {
      await enrolKey(services.watches, services.poller, principal, true);
      return true;
    },
    createHook: (arg) => {
      const { hook } = services.hooks.create(principal.keyHash, {
        target_url: (arg as { url: string }).url,
        events: ['device.offline', 'device.online'],
        device_ids: null,
      });
      return { id: hook.id, secret: hook.secret };
    },
    deleteHook: (arg) => {
      services.hooks.delete(principal.keyHash, (arg as { id: string }).id);
      return true;
    },
    startDeliverer: () => {
      services.deliverer.start();
      return true;
    },
    startPoller: () => {
      services.poller.start();
      return true;
    },
    poll: async (): Promise<PollDone> => {
      const t0 = performance.now();
      const result = await services.poller.pollOnce();
      return { ms: performance.now() - t0, events: result.events, doneAt: Date.now() };
    },
    /** Heartbeats of the devices at `indexes` set to `ageMs` before now. */
    setHeartbeats: (arg) => {
      const { indexes, ageMs } = arg as { indexes: number[]; ageMs: number };
      return setHeartbeats(db, indexes.map(benchDeviceId), (Date.now() - ageMs) * 1000);
    },
    /** One device's heartbeat set so that it goes offline `inMs` from now; returns that instant (Date.now() ms). */
    scheduleOffline: (arg) => {
      const { index, inMs } = arg as { index: number; inMs: number };
      const heartbeatMicros = Math.round((Date.now() - options.heartbeatTimeoutMs + inMs) * 1000);
      setHeartbeats(db, [benchDeviceId(index)], heartbeatMicros);
      return heartbeatMicros / 1000 + options.heartbeatTimeoutMs;
    },
    events: (arg) =>
      db
        .prepare('SELECT id, device_id, type, occurred_at, created_at FROM events WHERE id IN (SELECT value FROM json_each(?))')
        .all(JSON.stringify((arg as { ids: string[] }).ids)) as EventRow[],
    deliveryStats: () => ({
      deliveries: Object.fromEntries(
        (db.prepare('SELECT status, count(*) AS n FROM deliveries GROUP BY status').all() as Array<{ status: string; n: number }>).map((r) => [r.status, r.n]),
      ),
      attempts: db.prepare('SELECT coalesce(sum(attempts), 0) FROM deliveries').pluck().get() as number,
      retried: db.prepare('SELECT count(*) FROM deliveries WHERE attempts > 1').pluck().get() as number,
    }),
  };
  return { info: {}, handlers, close: () => stack.close() };
});

import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import type { Engine } from '../../src/db/database.js';
import { enrolKey } from '../../src/triggers/device-triggers.js';
import { httpWebhookSender } from '../../src/webhooks/sender.js';
import { targetPolicy } from '../../src/webhooks/target-guard.js';
import { signedHeaders } from '../../src/webhooks/signing.js';
import { serveChild, type Handlers } from '../lib/child.js';
import { countBy, openConnector } from '../lib/connector.js';
import { benchDeviceId, benchPrincipal, deviceDataset, setHeartbeats } from '../lib/devices.js';
import { makeKeysDue } from '../lib/poll.js';

/**
 * Child process of row 4 (webhooks): a connector in embedded mode over `devices` generated
 * devices of one key, on a SQLite file in a temp folder, logging at `info`, with
 * WEBHOOK_ALLOW_PRIVATE_TARGETS=true (the receivers are on 127.0.0.1) and POLL_INTERVAL_MS as
 * given. Nothing runs until the row says so: `startDeliverer`, `startPoller`, `poll`.
 * Device status changes are made the way a real device makes them: by its heartbeat in the
 * catalog (`setHeartbeats`, `scheduleOffline`).
 */
export interface WebhooksOptions {
  engine: Engine;
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
  const stack = await openConnector({
    label: 'webhooks',
    engine: options.engine,
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
    createHook: async (arg) => {
      const { hook } = await services.hooks.create(principal.keyHash, {
        target_url: (arg as { url: string }).url,
        events: ['device.offline', 'device.online'],
        device_ids: null,
      });
      return { id: hook.id, secret: hook.secret };
    },
    deleteHook: async (arg) => {
      await services.hooks.delete(principal.keyHash, (arg as { id: string }).id);
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
      await makeKeysDue(db);
      const t0 = performance.now();
      const result = await services.poller.runUntilIdle();
      return { ms: performance.now() - t0, events: result.events, doneAt: Date.now() };
    },
    /** Heartbeats of the devices at `indexes` set to `ageMs` before now. */
    setHeartbeats: (arg) => {
      const { indexes, ageMs } = arg as { indexes: number[]; ageMs: number };
      return setHeartbeats(db, indexes.map(benchDeviceId), (Date.now() - ageMs) * 1000);
    },
    /** One device's heartbeat set so that it goes offline `inMs` from now; returns that instant (Date.now() ms). */
    scheduleOffline: async (arg) => {
      const { index, inMs } = arg as { index: number; inMs: number };
      const heartbeatMicros = Math.round((Date.now() - options.heartbeatTimeoutMs + inMs) * 1000);
      await setHeartbeats(db, [benchDeviceId(index)], heartbeatMicros);
      return heartbeatMicros / 1000 + options.heartbeatTimeoutMs;
    },
    events: async (arg): Promise<EventRow[]> => {
      const ids = (arg as { ids: string[] }).ids;
      if (ids.length === 0) return [];
      return db.kysely.selectFrom('events').select(['id', 'device_id', 'type', 'occurred_at', 'created_at']).where('id', 'in', ids).execute();
    },
    /**
     * The ceiling: the same bodies signed and POSTed to `url` by a bare loop with the
     * deliverer's sender, `concurrency` at a time, nothing stored. Returns the rate.
     */
    ceiling: async (arg) => {
      const { url, secret, bodies, concurrency } = arg as { url: string; secret: string; bodies: Array<{ id: string; body: string }>; concurrency: number };
      const send = httpWebhookSender(services.config.WEBHOOK_TIMEOUT_MS, targetPolicy(true));
      const queue = [...bodies];
      const t0 = performance.now();
      let failed = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let next = queue.shift(); next; next = queue.shift()) {
            const headers = signedHeaders(secret, next.id, Math.floor(Date.now() / 1000), next.body);
            const result = await send(url, next.body, { ...headers });
            if (result.status === null || result.status >= 300) failed += 1;
          }
        }),
      );
      return { ms: performance.now() - t0, failed };
    },
    /**
     * CPU time (µs) the server processes of this connector's database connections have used,
     * read from /proc: PostgreSQL on this machine only (null otherwise: SQLite, a remote server).
     */
    dbCpu: async () => {
      if (db.engine !== 'postgres') return null;
      const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(db.kysely);
      let micros = 0;
      for (const { pid } of rows) {
        try {
          // utime and stime: fields 14 and 15 of /proc/<pid>/stat, in clock ticks (100 a second).
          const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
          micros += (Number(fields[11]) + Number(fields[12])) * 10_000;
        } catch {
          return null;
        }
      }
      return micros;
    },
    deliveryStats: async () => {
      const attempts = await db.kysely
        .selectFrom('deliveries')
        .select((eb) => eb.fn.sum<number>('attempts').as('n'))
        .executeTakeFirst();
      const retried = await db.kysely
        .selectFrom('deliveries')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('attempts', '>', 1)
        .executeTakeFirst();
      return { deliveries: await countBy(db, 'deliveries', 'status'), attempts: Number(attempts?.n ?? 0), retried: Number(retried?.n ?? 0) };
    },
  };
  return { info: {}, handlers, close: () => stack.close() };
});

import { hashKey } from '../../src/auth/keys.js';
import type { Db } from '../../src/db/database.js';
import { verify } from '../../src/webhooks/signing.js';
import { setHeartbeats } from './devices.js';
import type { Arrival, BenchReceiver } from './receiver.js';
import { progress } from './row.js';
import { bigDeviceId, smallDeviceId, smallKey } from './scale-dataset.js';

/**
 * The fairness phase of the `scale` row: one key (the big one) with `backlog` deliveries queued
 * at an origin (`slow`, a receiver answering after a while, so the backlog stays), then another
 * key's first delivery to that origin: a small account's device goes offline, and the time from
 * its event being written to its arrival is measured.
 *
 * The backlog is first made as a mass outage makes it: `backlog` devices go offline at once and
 * one poll should queue them all. Should that not happen within `onePollWaitMs`, they come back
 * online and go offline again `batch` at a time, one poll each, so that the fairness itself is
 * still measured; the row reports both.
 */
export interface FairnessOptions {
  db: Db;
  slow: BenchReceiver;
  /** The hook of the big key on `slow`, and the small key's hook there with its secret. */
  bigHookId: string;
  smallHook: { id: string; secret: string };
  /** Index of the first big device to use. */
  from: number;
  backlog: number;
  batch: number;
  heartbeatTimeoutMs: number;
  onePollWaitMs: number;
  batchWaitMs: number;
  firstWaitMs: number;
}

export interface FairnessMeasured {
  /** Deliveries queued after `backlog` devices went offline at once, and when the wait ended. */
  atOnce: { queued: number; waitedMs: number };
  /** Batches used to queue the backlog instead (0: it was queued at once). */
  batches: number;
  queued: number;
  queuedMs: number;
  firstMs: number;
  offlineToFirstMs: number;
  verified: boolean;
  backlogLeft: number;
  bigDelivered: number;
  complete: boolean;
}

/** Waits until `check` is true, looking every `everyMs`; false when `timeoutMs` passes first. */
export async function until(check: () => Promise<boolean> | boolean, timeoutMs: number, everyMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export function deviceOf(a: Arrival): string {
  try {
    return String((JSON.parse(a.body) as { data: { device: { id: string } } }).data.device.id);
  } catch {
    return '';
  }
}

export async function measureFairness(o: FairnessOptions): Promise<FairnessMeasured> {
  const { db } = o;
  const count = async (status?: 'pending') => {
    let q = db.kysely
      .selectFrom('deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('hook_id', '=', o.bigHookId);
    if (status) q = q.where('status', '=', status);
    return Number((await q.executeTakeFirst())?.n ?? 0);
  };
  const ids = Array.from({ length: o.backlog }, (_, i) => bigDeviceId(o.from + i));
  const offline = (part: string[]) => setHeartbeats(db, part, (Date.now() - o.heartbeatTimeoutMs) * 1000);

  const t0 = Date.now();
  await offline(ids);
  let queued = 0;
  await until(async () => (queued = await count()) >= o.backlog, o.onePollWaitMs, 200);
  const atOnce = { queued, waitedMs: Date.now() - t0 };
  let batches = 0;
  if (queued < o.backlog) {
    progress(
      `scale: ${o.backlog} devices offline at once queued ${queued} deliveries in ${(atOnce.waitedMs / 1000).toFixed(0)} s; queueing them ${o.batch} a poll instead`,
    );
    await setHeartbeats(db, ids, Date.now() * 1000); // back online: as in the snapshot, which the failed polls left as it was
    for (let at = 0; at < ids.length; at += o.batch) {
      batches += 1;
      const before = await count();
      await offline(ids.slice(at, at + o.batch));
      if (!(await until(async () => (queued = await count()) >= before + Math.min(o.batch, ids.length - at), o.batchWaitMs, 200))) break;
    }
  }
  const queuedMs = Date.now() - t0;

  const smallDevice = smallDeviceId(1, 0);
  const smallAt = Date.now();
  await offline([smallDevice]);
  let first: Arrival | undefined;
  const complete = await until(() => (first = o.slow.arrivals.find((a) => deviceOf(a) === smallDevice)) !== undefined, o.firstWaitMs, 20);
  const backlogLeft = await count('pending');
  const bigDelivered = o.slow.arrivals.filter((a) => a.at <= (first?.at ?? Infinity) && deviceOf(a) !== smallDevice).length;
  const event = await db.kysely
    .selectFrom('events')
    .select('created_at')
    .where('key_hash', '=', hashKey(smallKey(1)))
    .where('device_id', '=', smallDevice)
    .executeTakeFirst();
  const signed = (a: Arrival) =>
    verify(o.smallHook.secret, { 'webhook-id': a.id, 'webhook-timestamp': a.timestamp, 'webhook-signature': a.signature }, a.body, Math.floor(a.at / 1000));
  return {
    atOnce,
    batches,
    queued,
    queuedMs,
    firstMs: first && event ? first.at - Number(event.created_at) : NaN,
    offlineToFirstMs: first ? first.at - smallAt : NaN,
    verified: first ? signed(first) : false,
    backlogLeft,
    bigDelivered,
    complete,
  };
}

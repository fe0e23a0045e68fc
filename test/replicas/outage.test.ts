import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { fleetKey, FleetUpstream } from '../../bench/lib/fleet-upstream.js';
import { createTestDatabase, withServer, type TestDatabase } from '../helpers/postgres.js';
import { ensureBuild, waitFor } from '../helpers/processes.js';
import { checkDeliveries } from './checks.js';
import { eventsOf, ReplicaSet, subscribeAll, type LoggedEvent } from './harness.js';
import { SigningReceiver } from './signing-receiver.js';

/**
 * Several replicas, the database unreachable: two replicas on PostgreSQL, light load (5 keys × 4
 * devices, one hook each). Deliveries are queued first (the receiver answers 503), then for
 * ~3 s the database refuses connections (ALLOW_CONNECTIONS false) while its sessions are
 * terminated in a loop, and devices change meanwhile. During it: `/readyz` 503 and requests
 * that need the database 503 `{"message":"Database unavailable"}`; no process exits. After it:
 * ready again by itself, and every transition, before and during the outage, is logged once
 * and delivered.
 */
const keyCount = 5;
const intervalMs = 500;
const outageMs = 3000;

let db: TestDatabase;
let fleet: FleetUpstream;
let receiver: SigningReceiver;
let set: ReplicaSet | undefined;

beforeAll(async () => {
  await ensureBuild();
  [db, fleet, receiver] = await Promise.all([createTestDatabase(), new FleetUpstream(keyCount, 4).start(), new SigningReceiver().start()]);
}, 180_000);

afterAll(async () => {
  await set?.stop();
  await Promise.all([fleet?.stop(), receiver?.stop()]);
  await db?.drop();
});

interface Probe {
  replica: number;
  path: string;
  status: number;
  body: string;
}

async function probe(url: string, replica: number, path: string, key?: number): Promise<Probe> {
  try {
    const res = await fetch(`${url}${path}`, {
      headers: key === undefined ? {} : { authorization: `Bearer ${fleetKey(key)}` },
      signal: AbortSignal.timeout(8000),
    });
    return { replica, path, status: res.status, body: await res.text() };
  } catch (err) {
    return { replica, path, status: 0, body: (err as Error).message };
  }
}

describe('database outage (2 replicas on PostgreSQL)', () => {
  test('503 "Database unavailable" and /readyz 503 while the database is gone, no exit, recovery with nothing lost', async () => {
    set = await new ReplicaSet(2, {
      DEVICE_API_URL: fleet.url,
      DATABASE_URL: db.url,
      CONNECTOR_SECRET: '6'.repeat(64),
      POLL_INTERVAL_MS: String(intervalMs),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_RETRY_SCHEDULE_MS: '500,1000,2000,4000,8000,16000',
      LOG_LEVEL: 'fatal',
    }).start();
    const keys = Array.from({ length: keyCount }, (_, k) => k);
    receiver.mode = 'unavailable';
    await subscribeAll(set, fleet, receiver, keys);
    await new Promise((resolve) => setTimeout(resolve, 3 * intervalMs));
    for (const key of keys) fleet.flip(key, 0);
    await waitFor('a refused first attempt of every delivery', () => new Set(receiver.arrivals.map((a) => a.key)).size === keyCount, 15_000);

    receiver.mode = 'ok';
    const probes: Probe[] = [];
    const outageStart = Date.now();
    await withServer(async (admin) => {
      const name = admin.escapeIdentifier(db.name);
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      try {
        let flipped = false;
        while (Date.now() - outageStart < outageMs) {
          await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name]);
          if (!flipped && Date.now() - outageStart > outageMs / 3) {
            for (const key of keys) fleet.flip(key, 1); // changes while the database is away
            flipped = true;
          }
          for (const [i, r] of set!.replicas.entries()) probes.push(await probe(r.url, i, '/readyz'), await probe(r.url, i, '/v1/events', i));
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      } finally {
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      }
    });
    const outageEnd = Date.now();

    for (const replica of [0, 1]) {
      const mine = probes.filter((p) => p.replica === replica);
      expect(mine.filter((p) => p.path === '/readyz').map((p) => p.status)).toContain(503);
      const events = mine.filter((p) => p.path === '/v1/events' && p.status === 503);
      const seen = mine.filter((p) => p.path === '/v1/events').map((p) => `${p.status} ${p.status === 503 ? '' : p.body.slice(0, 120)}`);
      expect({ replica, answered503: events.length > 0, seen: events.length > 0 ? [] : seen }).toEqual({ replica, answered503: true, seen: [] });
      for (const p of events) expect(JSON.parse(p.body)).toEqual({ message: 'Database unavailable' });
      expect(mine.filter((p) => ![200, 503].includes(p.status))).toEqual([]);
    }
    expect(set.unexpectedExits).toEqual([]);

    await waitFor(
      'both replicas ready again',
      async () => (await Promise.all(set!.replicas.map((r) => probe(r.url, 0, '/readyz')))).every((p) => p.status === 200),
      20_000,
    );
    const okKeys = () => new Set(receiver.arrivals.filter((a) => a.status < 300).map((a) => `${a.key}|${a.deviceId}|${a.type}|${a.heartbeat}`));
    await waitFor(
      'every transition delivered',
      () => fleet.transitions.every((t) => okKeys().has(`${t.key}|${t.deviceId}|${t.type}|${t.heartbeat}`)),
      30_000,
    ).catch(() => undefined);

    const logs = new Map<number, LoggedEvent[]>();
    for (const key of keys) logs.set(key, await eventsOf(set.url(key % 2), key));
    const deliveries = checkDeliveries({ fleet, receiver, logs, excused: [{ from: outageStart - 2000, to: outageEnd + 500 }] });
    console.log(
      `outage: ${outageEnd - outageStart} ms, ${probes.length} probes (${probes.filter((p) => p.status === 503).length} answered 503); ${deliveries.summary}`,
    );
    expect(deliveries.problems).toEqual([]);
    expect(fleet.transitions).toHaveLength(2 * keyCount);
    expect(set.unexpectedExits).toEqual([]);
    expect(set.running).toHaveLength(2);
  }, 90_000);
});

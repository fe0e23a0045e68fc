import { afterEach, expect, test } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { hashKey } from '../../src/auth/keys.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { queueOfflineEvents } from '../helpers/queued-events.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * `deliverer.drain()` runs the deliverer that runs in production (its claim loop, a lane per
 * target origin, the attempt recorder) until nothing is due by the injected clock and every
 * attempt is recorded (docs/webhooks.md, "Fairness" and "Delivery").
 */
let t: TestApp;
const servers: Server[] = [];
afterEach(async () => {
  await t?.close();
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
});

const keyHash = hashKey(keys.ana);

/** `count` events of one device, logged now and fanned out to the key's hooks. */
async function queue(device: string, count: number, tag: string): Promise<void> {
  const ids = Array.from({ length: count }, (_, i) => `evt_${tag}_${i}`);
  await queueOfflineEvents(t.db, keyHash, device, ids, t.clock.now());
}

const hook = async (target: string, device: string) =>
  (
    await request(t.app)
      .post('/v1/hooks')
      .set('X-API-Key', keys.ana)
      .send({ target_url: target, device_ids: [device] })
      .expect(201)
  ).body.id as string;

/**
 * Receivers on two origins, counting what each has in flight. The first requests are held
 * until `gate` of them are in flight together, so the deliverer must be sending to both
 * origins at once to get past them (after 10 s they are let go anyway, and the test fails).
 */
function twoOrigins(gate: number) {
  const seen = { arrivals: [] as string[], inFlight: { a: 0, b: 0 }, most: { a: 0, b: 0 }, inFlightTogether: 0, gateOpened: false };
  const held: Array<() => void> = [];
  let open = false;
  const openGate = () => {
    open = true;
    for (const answer of held.splice(0)) answer();
  };
  const fallback = setTimeout(openGate, 10_000);
  fallback.unref();
  const start = async (name: 'a' | 'b') => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.arrivals.push(`${name}${req.url}`);
        seen.inFlight[name] += 1;
        seen.most[name] = Math.max(seen.most[name], seen.inFlight[name]);
        seen.inFlightTogether = Math.max(seen.inFlightTogether, seen.inFlight.a + seen.inFlight.b);
        const answer = () => {
          seen.inFlight[name] -= 1;
          res.writeHead(204).end();
        };
        if (open) return answer();
        held.push(answer);
        if (held.length === gate) {
          seen.gateOpened = true;
          clearTimeout(fallback);
          openGate();
        }
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  return { seen, start };
}

test('each origin has at most WEBHOOK_TARGET_CONCURRENCY in flight, the origins side by side; another hook goes ahead of a backlog; every attempt recorded', async () => {
  t = await buildTestApp({
    dataset: catalog(),
    clock: new ManualClock(Date.now()),
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TARGET_CONCURRENCY: '2' },
  });
  const origins = twoOrigins(4);
  const [a, b] = [await origins.start('a'), await origins.start('b')];
  await hook(`${a}/busy`, 'a4:83:e7:1f:2b:01');
  await hook(`${a}/quiet`, 'a4:83:e7:1f:2b:02');
  await hook(`${b}/other`, 'a4:83:e7:1f:2b:03');
  await queue('a4:83:e7:1f:2b:01', 40, 'busy');
  t.clock.advance(1_000);
  await queue('a4:83:e7:1f:2b:02', 1, 'quiet');
  await queue('a4:83:e7:1f:2b:03', 5, 'other');
  t.clock.advance(1);

  expect(await t.services.deliverer.drain()).toBe(46);
  // Two in flight on each origin at once (the gate opened at four), never more on one.
  expect(origins.seen.gateOpened).toBe(true);
  expect(origins.seen.most).toEqual({ a: 2, b: 2 });
  // The quiet hook's one delivery was among the first sent, not behind the busy hook's 40.
  const onA = origins.seen.arrivals.filter((x) => x.startsWith('a'));
  expect(onA).toHaveLength(41);
  expect(onA.indexOf('a/quiet')).toBeLessThan(4);
  // Recorded, leases over: nothing pending, nothing left to send.
  expect(await t.value("SELECT count(*) FROM deliveries WHERE status = 'delivered' AND leased_until = 0")).toBe(46);
  expect(Number(await t.value('SELECT count(*) FROM delivery_attempts'))).toBe(46);
  expect(await t.services.deliverer.drain()).toBe(0);
  expect(origins.seen.arrivals).toHaveLength(46);
});

test('with the loop already running, drain waits for it to finish what is due and leaves it running', async () => {
  t = await buildTestApp({ dataset: catalog(), clock: new ManualClock(Date.now()), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' } });
  const origins = twoOrigins(1);
  const a = await origins.start('a');
  await hook(`${a}/one`, 'a4:83:e7:1f:2b:01');
  t.services.deliverer.start();
  await queue('a4:83:e7:1f:2b:01', 3, 'first');
  expect(await t.services.deliverer.drain()).toBe(3);
  await queue('a4:83:e7:1f:2b:01', 2, 'second');
  expect(await t.services.deliverer.drain()).toBe(2);
  expect(origins.seen.arrivals).toHaveLength(5);
  expect(await t.value("SELECT count(*) FROM deliveries WHERE status = 'delivered'")).toBe(5);
});

test('while the poller is behind on a busy event loop, one delivery at a time, the origins in turn; then their concurrency again', async () => {
  const pressure = { behind: true, pollStarted: () => undefined };
  t = await buildTestApp({
    dataset: catalog(),
    clock: new ManualClock(Date.now()),
    env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', WEBHOOK_TARGET_CONCURRENCY: '2' },
    pollPressure: pressure,
  });
  const origins = twoOrigins(1);
  const [a, b] = [await origins.start('a'), await origins.start('b')];
  await hook(`${a}/one`, 'a4:83:e7:1f:2b:01');
  await hook(`${b}/two`, 'a4:83:e7:1f:2b:02');
  await queue('a4:83:e7:1f:2b:01', 6, 'one');
  await queue('a4:83:e7:1f:2b:02', 6, 'two');
  expect(await t.services.deliverer.drain()).toBe(12);
  expect(origins.seen.most).toEqual({ a: 1, b: 1 });
  expect(origins.seen.inFlightTogether).toBe(1);
  // In turn: neither origin waits for the other's backlog (at most two of one origin in a row,
  // the first claim's origin before the other's deliveries are claimed).
  const runs = origins.seen.arrivals
    .map((x) => x[0])
    .join('')
    .match(/a+|b+/g)!;
  expect(Math.max(...runs.slice(0, -1).map((run) => run.length))).toBeLessThanOrEqual(2);

  // No longer behind: both origins, two each, side by side (the gate opens at four in flight).
  pressure.behind = false;
  const again = twoOrigins(4);
  const [c, d] = [await again.start('a'), await again.start('b')];
  await hook(`${c}/three`, 'a4:83:e7:1f:2b:03');
  await hook(`${d}/four`, 'a4:83:e7:1f:2b:04');
  await queue('a4:83:e7:1f:2b:03', 6, 'three');
  await queue('a4:83:e7:1f:2b:04', 6, 'four');
  expect(await t.services.deliverer.drain()).toBe(12);
  expect(again.seen.gateOpened).toBe(true);
  expect(again.seen.most).toEqual({ a: 2, b: 2 });
});

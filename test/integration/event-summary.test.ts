import { afterEach, beforeEach, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { catalog, keys } from '../fixtures/catalog.js';
import { hashKey } from '../../src/auth/keys.js';
import { formatMicros } from '../../src/time/timestamps.js';

// docs/triggers.md "Event summary". The fixture clock starts at 2026-06-01T12:00:00Z; Ana's
// device a4:83:e7:1f:2b:01 is online with a heartbeat 30 s old and times out after 5 minutes.
const hourMs = 3_600_000;
const weekHours = 7 * 24;

let t: TestApp;
beforeEach(async () => {
  t = await buildTestApp({ dataset: catalog() });
});
afterEach(async () => {
  await t.close();
});

const get = (path: string, key: string = keys.ana) => request(t.app).get(path).set('X-API-Key', key);

interface Summary {
  interval: string;
  from: string;
  until: string;
  types: string[];
  totals: Record<string, number>;
  buckets: Array<{ start: string; counts: Record<string, number> }>;
}

/** An event row as the event log writes it, `occurred_at` at `atMs` (the log's contents, not its code, are under test). */
async function logEvent(key: string, type: string, atMs: number, n: number): Promise<void> {
  const occurred = formatMicros(atMs * 1000);
  await t.all(
    'INSERT INTO events (id, key_hash, type, device_id, occurred_at, payload, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    `evt_test_${type}_${atMs}_${n}`,
    hashKey(key),
    type,
    'a4:83:e7:1f:2b:01',
    occurred,
    '{}',
    t.clock.now(),
  );
}

describe('GET /v1/events/summary', () => {
  test('an empty log: every hour of the retained week up to the current one, all zero', async () => {
    const res = await get('/v1/events/summary?interval=hour').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.body as Summary;
    expect(body).toMatchObject({ interval: 'hour', from: '2026-05-25T12:00:00Z', until: '2026-06-01T13:00:00Z', types: ['device.offline', 'device.online'] });
    expect(body.totals).toEqual({ 'device.offline': 0, 'device.online': 0 });
    expect(body.buckets).toHaveLength(weekHours + 1);
    expect(body.buckets[0]).toEqual({ start: '2026-05-25T12:00:00Z', counts: { 'device.offline': 0, 'device.online': 0 } });
    expect(body.buckets.at(-1)!.start).toBe('2026-06-01T12:00:00Z');
  });

  test('a transition the poller records is counted in the hour it occurred', async () => {
    await get('/v1/triggers/device-status').expect(200, []); // enrols the key: the baseline
    t.clock.advance(300_000);
    expect((await pollDue(t)).events).toBe(1);
    const [event] = (await get('/v1/triggers/device-status').expect(200)).body as Array<{ occurred_at: string }>;
    const body = (await get('/v1/events/summary').expect(200)).body as Summary;
    expect(body.interval).toBe('hour');
    expect(body.totals).toEqual({ 'device.offline': 1, 'device.online': 0 });
    const hour = `${event!.occurred_at.slice(0, 13)}:00:00Z`;
    expect(body.buckets.filter((b) => b.counts['device.offline'] !== 0)).toEqual([{ start: hour, counts: { 'device.offline': 1, 'device.online': 0 } }]);
  });

  test('counts per type per hour and per day; events before the window and of other keys are left out', async () => {
    const now = t.clock.now(); // 12:00
    await logEvent(keys.ana, 'device.offline', now - 2 * hourMs + 60_000, 1); // 10:01
    await logEvent(keys.ana, 'device.offline', now - 2 * hourMs + 120_000, 2); // 10:02
    await logEvent(keys.ana, 'device.online', now - 2 * hourMs + 180_000, 3); // 10:03
    await logEvent(keys.ana, 'device.online', now - 26 * hourMs, 4); // yesterday 10:00
    await logEvent(keys.ana, 'device.offline', now - 8 * 24 * hourMs, 5); // past the retained week
    await logEvent(keys.zoe, 'device.offline', now - hourMs, 6); // another account's key

    const hourly = (await get('/v1/events/summary?interval=hour').expect(200)).body as Summary;
    expect(hourly.totals).toEqual({ 'device.offline': 2, 'device.online': 2 });
    const busy = hourly.buckets.filter((b) => b.counts['device.offline']! + b.counts['device.online']! > 0);
    expect(busy).toEqual([
      { start: '2026-05-31T10:00:00Z', counts: { 'device.offline': 0, 'device.online': 1 } },
      { start: '2026-06-01T10:00:00Z', counts: { 'device.offline': 2, 'device.online': 1 } },
    ]);

    const daily = (await get('/v1/events/summary?interval=day').expect(200)).body as Summary;
    expect(daily).toMatchObject({ interval: 'day', from: '2026-05-25T00:00:00Z', until: '2026-06-02T00:00:00Z' });
    expect(daily.buckets).toHaveLength(8);
    expect(daily.buckets.at(-1)).toEqual({ start: '2026-06-01T00:00:00Z', counts: { 'device.offline': 2, 'device.online': 1 } });
    expect(daily.buckets.at(-2)).toEqual({ start: '2026-05-31T00:00:00Z', counts: { 'device.offline': 0, 'device.online': 1 } });

    const online = (await get('/v1/events/summary?type=device.online', keys.ana).expect(200)).body as Summary;
    expect(online.types).toEqual(['device.online']);
    expect(online.totals).toEqual({ 'device.online': 2 });

    const zoe = (await get('/v1/events/summary', keys.zoe).expect(200)).body as Summary;
    expect(zoe.totals).toEqual({ 'device.offline': 1, 'device.online': 0 });
  });

  test('Bearer works as well as X-API-Key', async () => {
    await request(t.app).get('/v1/events/summary').set('Authorization', `Bearer ${keys.ana}`).expect(200);
  });

  test('bad parameters are a 400 naming each one', async () => {
    const res = await get('/v1/events/summary?interval=minute&type=device.gone').expect(400);
    expect(res.body.message).toBe('interval must be one of hour, day');
    expect(res.body.details).toEqual([
      { path: 'interval', message: 'interval must be one of hour, day' },
      { path: 'type', message: 'type must be device.offline or device.online (comma-separated)' },
    ]);
  });

  test('no key is a 401, a key without device:read a 403', async () => {
    await request(t.app).get('/v1/events/summary').expect(401, { message: 'Missing API key' });
    const res = await get('/v1/events/summary', keys.anaMenuOnly).expect(403);
    expect(res.body.message).toBe('Invalid scopes');
  });
});

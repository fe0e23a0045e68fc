import { afterAll, beforeAll, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * Every status change the poller records is logged at info with its event type and device id,
 * so "did the connector see screen 01 go offline?" has an answer in the log; never the key.
 */

const timeoutMs = 300_000;
const lines: string[] = [];
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp({ dataset: catalog(), logLines: lines, env: { LOG_LEVEL: 'info', HEARTBEAT_TIMEOUT_MS: String(timeoutMs) } });
});
afterAll(async () => {
  await t.close();
});

test('a device going offline is logged at info with its type and device id, without the key', async () => {
  await request(t.app).get('/v1/triggers/device-status').set('X-API-Key', keys.ana).expect(200, []);
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);
  const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  const changes = entries.filter((entry) => entry.msg === 'device status changed');
  expect(changes).toEqual([expect.objectContaining({ level: 30, type: 'device.offline', deviceId: 'a4:83:e7:1f:2b:01' })]);
  expect(changes[0]).toHaveProperty('eventId');
  expect(lines.join('\n')).not.toContain(keys.ana);
});

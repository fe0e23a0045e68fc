import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoKey } from '../../src/demo/banner.js';
import { Child, demoJs } from '../helpers/child.js';
import { ensureBuild } from '../helpers/processes.js';
import { Receiver } from '../helpers/receiver.js';

/**
 * `npm run demo` (dist/src/cli/demo.js) as a real process, on a fast clock (HEARTBEAT_TIMEOUT_MS
 * 1 s: screens are silent 2 s every 4 s): what happens is told on stdout in plain lines.
 */

let tmp: string;
let child: Child | undefined;
let receiver: Receiver | undefined;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-demo-test-'));
  await ensureBuild();
}, 180_000);

afterAll(async () => {
  await child?.stop();
  await receiver?.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('screens going offline and coming back, and webhook retries and deliveries, are told one readable line each', async () => {
  receiver = await new Receiver().start();
  receiver.respondWith({ status: 500 });
  child = new Child(demoJs, {
    env: {
      HOST: '127.0.0.1',
      PORT: '0',
      DATABASE_PATH: join(tmp, 'demo.db'),
      HEARTBEAT_TIMEOUT_MS: '1000',
      POLL_INTERVAL_MS: '200',
      WEBHOOK_RETRY_SCHEDULE_MS: '300,300',
    },
    timeoutMs: 60_000,
  });
  const [, port] = await child.waitFor(/http:\/\/127\.0\.0\.1:(\d+)/);
  await child.waitFor(/Demo mode/);
  const created = await fetch(`http://127.0.0.1:${port}/v1/hooks`, {
    method: 'POST',
    headers: { 'X-API-Key': demoKey, 'Content-Type': 'application/json' },
    body: JSON.stringify({ target_url: receiver.url }),
  });
  expect(created.status).toBe(201);

  const time = '\\d\\d:\\d\\d:\\d\\d';
  await child.waitFor(new RegExp(`^${time}  .+ \\(a4:83:e7:1f:2b:0[135]\\) went offline: no heartbeat since ${time}$`, 'm'));
  await child.waitFor(new RegExp(`^${time}  .+ \\(a4:83:e7:1f:2b:0[135]\\) is back online$`, 'm'));
  const target = receiver.url.replace(/[.]/g, '\\.');
  await child.waitFor(new RegExp(`^${time}  Webhook device\\.(offline|online) of .+ to ${target} failed \\(HTTP 500, attempt 1\\); retrying at ${time}$`, 'm'));
  await child.waitFor(new RegExp(`^${time}  Webhook device\\.(offline|online) of .+ delivered to ${target} \\(HTTP 204, \\d+ ms, attempt \\d\\)$`, 'm'));
  expect(receiver.received.length).toBeGreaterThanOrEqual(2);

  // No request-log noise: logs are at warn in the demo (a warning, e.g. the generated
  // CONNECTOR_SECRET, may still show; it is pretty-printed where LOG_FORMAT is supported).
  const jsonLines = child.stdout.split('\n').filter((line) => line.trimStart().startsWith('{'));
  for (const line of jsonLines) expect((JSON.parse(line) as { level: number }).level).toBeGreaterThanOrEqual(40);
  expect(child.stdout.split('\n').filter((line) => /^\d\d:\d\d:\d\d {2}/.test(line)).length).toBeGreaterThanOrEqual(4);
  const stopped = await child.stop();
  expect(stopped.code).toBe(0);
}, 60_000);

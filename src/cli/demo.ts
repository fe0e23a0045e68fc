import { openDatabase } from '../db/database.js';
import { demoDatasetPath } from '../paths.js';
import { demoKey } from '../demo/banner.js';
import { formatMicros } from '../time/timestamps.js';
import { run } from '../main.js';

/**
 * `npm run demo`: the service on the demo dataset, with a heartbeat simulator so triggers and
 * webhooks have something to show. Devices that were online keep sending heartbeats; three of
 * Ana's screens fall silent for 40 s every 80 s (offline after HEARTBEAT_TIMEOUT_MS, 20 s here)
 * and then come back. Every setting can still be overridden from the environment.
 */
const defaults: Record<string, string> = {
  DATABASE_PATH: 'data/demo.db',
  DATASET: demoDatasetPath,
  HEARTBEAT_TIMEOUT_MS: '20000',
  POLL_INTERVAL_MS: '2000',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE_MS: '2000,5000,15000,60000',
};
for (const [name, value] of Object.entries(defaults)) process.env[name] ??= value;

const flappers = ['a4:83:e7:1f:2b:01', 'a4:83:e7:1f:2b:03', 'a4:83:e7:1f:2b:05'];
const cycleMs = 80_000;
const silentMs = 40_000;
const beatMs = 5_000;

const server = await run();
if (server) {
  const db = openDatabase(process.env.DATABASE_PATH!);
  // Whatever had a heartbeat in the last 5 minutes at start stays alive.
  const alive = db
    .prepare('SELECT id FROM devices WHERE last_heartbeat_at > ?')
    .pluck()
    .all(formatMicros((Date.now() - 300_000) * 1000)) as string[];
  const beat = db.prepare('UPDATE devices SET last_heartbeat_at = ?, updated_at = ? WHERE id = ?');
  const started = Date.now();
  const tick = () => {
    const now = Date.now();
    const stamp = formatMicros(now * 1000);
    for (const id of new Set([...alive, ...flappers])) {
      const slot = flappers.indexOf(id);
      const phase = slot < 0 ? -1 : (now - started + (slot * cycleMs) / flappers.length) % cycleMs;
      if (phase < 0 || phase < cycleMs - silentMs) beat.run(stamp, stamp, id);
    }
  };
  tick();
  const timer = setInterval(tick, beatMs);
  process.once('SIGTERM', () => clearInterval(timer));
  process.once('SIGINT', () => clearInterval(timer));
  const port = (server.address() as { port: number }).port;
  process.stdout.write(`
Demo mode: heartbeats are simulated. Three of Ana's screens (${flappers.join(', ')})
go silent for ${silentMs / 1000} s every ${cycleMs / 1000} s; with HEARTBEAT_TIMEOUT_MS=${process.env.HEARTBEAT_TIMEOUT_MS} they go offline and come back.
Watch the events:
  curl -s -H 'X-API-Key: ${demoKey}' http://localhost:${port}/v1/triggers/device-status
Watch signed webhooks arrive (subscribes, verifies and prints each delivery; Ctrl+C unsubscribes):
  npm run receiver -- --connector http://localhost:${port} --key ${demoKey}
`);
}

import { openDatabase } from '../db/database.js';
import { databaseOptions } from './context.js';
import { demoDatasetPath } from '../paths.js';
import { demoKey } from '../demo/banner.js';
import { startNarrator } from '../demo/narrator.js';
import { formatMicros } from '../time/timestamps.js';
import { loadConfig } from '../config.js';
import { DotEnvError, loadDotEnv } from '../env-file.js';
import { run } from '../main.js';

/**
 * `npm run demo`: the service on the demo dataset, with a heartbeat simulator so triggers and
 * webhooks have something to show, told as it happens in plain lines on stdout. Devices that were
 * online keep sending heartbeats; three of Ana's screens fall silent for 2×HEARTBEAT_TIMEOUT_MS
 * every 4×HEARTBEAT_TIMEOUT_MS (40 s every 80 s with the demo's 20 s), so they go offline and
 * come back. Every setting can still be overridden from the environment or `.env`; logs are
 * at `warn` unless LOG_LEVEL says otherwise, so the story is not buried in request lines.
 */
const defaults: Record<string, string> = {
  DATABASE_PATH: 'data/demo.db',
  DATASET: demoDatasetPath,
  HEARTBEAT_TIMEOUT_MS: '20000',
  POLL_INTERVAL_MS: '2000',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  WEBHOOK_RETRY_SCHEDULE_MS: '2000,5000,15000,60000',
  LOG_LEVEL: 'warn',
  LOG_FORMAT: 'pretty',
};
try {
  loadDotEnv();
} catch (err) {
  if (!(err instanceof DotEnvError)) throw err;
  console.error(err.message);
  process.exit(1);
}
for (const [name, value] of Object.entries(defaults)) process.env[name] ??= value;

const flappers = ['a4:83:e7:1f:2b:01', 'a4:83:e7:1f:2b:03', 'a4:83:e7:1f:2b:05'];

const server = await run({ simulatedHeartbeats: true });
if (server) {
  const config = loadConfig();
  const timeoutMs = config.HEARTBEAT_TIMEOUT_MS;
  const cycleMs = 4 * timeoutMs;
  const silentMs = 2 * timeoutMs;
  const db = await openDatabase(databaseOptions(config));
  // Whatever had a heartbeat in the last 5 minutes at start stays alive.
  const alive = (
    await db.kysely
      .selectFrom('devices')
      .select('id')
      .where('last_heartbeat_at', '>', formatMicros((Date.now() - 300_000) * 1000))
      .execute()
  ).map((r) => r.id);
  const started = Date.now();
  const tick = async () => {
    const now = Date.now();
    const stamp = formatMicros(now * 1000);
    const beating = [...new Set([...alive, ...flappers])].filter((id) => {
      const slot = flappers.indexOf(id);
      const phase = slot < 0 ? -1 : (now - started + (slot * cycleMs) / flappers.length) % cycleMs;
      return phase < 0 || phase < cycleMs - silentMs;
    });
    await db.kysely.updateTable('devices').set({ last_heartbeat_at: stamp, updated_at: stamp }).where('id', 'in', beating).execute();
  };
  const beat = () => void tick().catch((err: unknown) => console.error(`Demo heartbeat failed: ${(err as Error).message}`));
  beat();
  const timer = setInterval(beat, Math.max(50, Math.floor(timeoutMs / 4)));
  const port = (server.address() as { port: number }).port;
  const shown = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
  const stopNarrator = await startNarrator({
    baseUrl: `http://${shown.includes(':') ? `[${shown}]` : shown}:${port}`,
    key: demoKey,
    intervalMs: Math.min(1000, config.POLL_INTERVAL_MS),
    write: (line) => process.stdout.write(line),
  });
  const stop = () => {
    clearInterval(timer);
    stopNarrator();
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.stdout.write(`
Demo mode: heartbeats are simulated. Three of Ana's screens (${flappers.join(', ')})
go silent for ${silentMs / 1000} s every ${cycleMs / 1000} s; with HEARTBEAT_TIMEOUT_MS=${timeoutMs} they go offline and come back.
What happens is told below, one line each: screens going offline or coming back, and webhook
deliveries to hooks of the demo key. (Request logs: LOG_LEVEL=info npm run demo.)
Watch the events:
  curl -s -H 'X-API-Key: ${demoKey}' http://localhost:${port}/v1/triggers/device-status
Watch signed webhooks arrive (subscribes, verifies and prints each delivery; Ctrl+C unsubscribes):
  npm run receiver -- --connector http://localhost:${port} --key ${demoKey}

`);
}

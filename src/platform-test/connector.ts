import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../paths.js';
import { platformDataset } from './dataset.js';

/**
 * A live connector for one platform's tests: `dist/src/main.js` on a free loopback port, on a
 * fresh SQLite database holding the platform dataset. Webhooks may go to loopback through
 * `WEBHOOK_ALLOWED_TARGETS` (the way a self-hosted platform on an internal network is allowed),
 * devices stay online for a day unless the control server says otherwise, and the poller runs
 * every 500 ms so a transition reaches a trigger within a second or two.
 */
export interface LiveConnector {
  baseUrl: string;
  databasePath: string;
  logFile: string;
  stop(): Promise<void>;
}

export const heartbeatTimeoutMs = 86_400_000;

export async function startConnector(extraEnv: Record<string, string> = {}): Promise<LiveConnector> {
  const dir = mkdtempSync(join(tmpdir(), 'connector-platform-'));
  const datasetPath = join(dir, 'dataset.json');
  writeFileSync(datasetPath, JSON.stringify(platformDataset()));
  const databasePath = join(dir, 'connector.db');
  const logFile = join(dir, 'connector.log');
  const log = openSync(logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, [join(projectRoot, 'dist', 'src', 'main.js')], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_PATH: databasePath,
      DATASET: datasetPath,
      HEARTBEAT_TIMEOUT_MS: String(heartbeatTimeoutMs),
      POLL_INTERVAL_MS: '500',
      // The apps' receivers run on this machine; every other target keeps the public https rule.
      WEBHOOK_ALLOWED_TARGETS: '127.0.0.0/8,::1/128',
      WEBHOOK_RETRY_SCHEDULE_MS: '1000,2000,5000',
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      ...extraEnv,
    },
    stdio: ['ignore', log, log],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const until = Date.now() + 30_000;
  let port: number | undefined;
  while (port === undefined) {
    const text = readFileSync(logFile, 'utf8');
    const match = /"port":(\d+)[^\n]*"msg":"listening"|"msg":"listening"[^\n]*"port":(\d+)/.exec(text);
    if (match) port = Number(match[1] ?? match[2]);
    else if (child.exitCode !== null || Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`the connector did not start:\n${text.slice(-4000)}`);
    } else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    databasePath,
    logFile,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

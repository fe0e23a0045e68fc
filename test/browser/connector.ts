import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

export const adminToken = 'console-test-admin-token-0123456789abcdef';
export const demoKey = 'sk_demo_harbor_ana_all_0123456789';

export interface LiveConnector {
  base: string;
  dbPath: string;
  output(): string;
  stop(): Promise<void>;
}

/**
 * `node dist/src/main.js` on 127.0.0.1 and a free port, with a database of its own in a
 * temporary folder (the demo dataset unless `DATASET` is given), the operator API on, and
 * private webhook targets allowed (the test's receiver is on loopback). `dir` holds the
 * database (`connector.db`) and is removed at `stop`.
 */
export async function startConnector(
  env: Record<string, string> = {},
  startTimeoutMs = 60_000,
  dir = mkdtempSync(join(tmpdir(), 'console-connector-')),
): Promise<LiveConnector> {
  const dbPath = join(dir, 'connector.db');
  const child: ChildProcess = spawn(process.execPath, [join(projectRoot, 'dist', 'src', 'main.js')], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_PATH: dbPath,
      LOG_FORMAT: 'json',
      ADMIN_TOKEN: adminToken,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      POLL_INTERVAL_MS: '500',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the connector did not start within ${startTimeoutMs} ms:\n${out.slice(-2000)}`)), startTimeoutMs);
    const check = () => {
      const match = /"port":(\d+)[^\n]*listening|listening[^\n]*"port":(\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1] ?? match[2]));
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the connector exited (${code}) before listening:\n${out.slice(-2000)}`));
    });
  });
  return {
    base: `http://127.0.0.1:${port}`,
    dbPath,
    output: () => out,
    async stop() {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(killer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** `npm run import` of a dataset file into `dir`'s database, before a connector starts on it. */
export async function importInto(dir: string, datasetFile: string): Promise<void> {
  const child = spawn(process.execPath, [join(projectRoot, 'dist', 'src', 'cli', 'import.js'), datasetFile], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', DATABASE_PATH: join(dir, 'connector.db'), LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (chunk) => (out += chunk));
  child.stderr!.on('data', (chunk) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`import failed (${code}):\n${out.slice(-2000)}`);
}

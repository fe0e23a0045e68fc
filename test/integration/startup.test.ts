import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoDatasetPath, projectRoot } from '../../src/paths.js';
import { Child, importJs, mainJs } from '../helpers/child.js';
import { ensureBuild } from '../helpers/processes.js';

/**
 * `node dist/src/main.js` as a real process (docs/configuration.md): a `.env` in the working directory is
 * read, the environment wins over it; start-up failures are one line that names what to change.
 */

let tmp: string;
const children: Child[] = [];

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'connector-startup-test-'));
  await ensureBuild();
  expect(existsSync(mainJs)).toBe(true);
}, 180_000);

afterAll(async () => {
  for (const child of children) await child.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

let dirs = 0;
function newDir(): string {
  dirs += 1;
  const dir = join(tmp, `run-${dirs}`);
  mkdirSync(dir);
  return dir;
}

function start(env: Record<string, string>, cwd?: string): Child {
  const child = new Child(mainJs, { env, cwd });
  children.push(child);
  return child;
}

/** Runs main.js to its exit and returns its one stderr line. */
async function failure(env: Record<string, string>, cwd?: string): Promise<string> {
  const result = await start(env, cwd).exited;
  expect(result.code).toBe(1);
  const lines = result.stderr.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  return lines[0]!;
}

describe('.env', () => {
  test('is read from the working directory; variables set in the environment win', async () => {
    const cwd = newDir();
    writeFileSync(
      join(cwd, '.env'),
      ['# comment', 'PORT=0', 'DATABASE_PATH=from-dotenv/connector.db', 'METRICS_TOKEN="token-from-dotenv-0123456789"', 'LOG_LEVEL=loud', ''].join('\n'),
    );
    // LOG_LEVEL=loud in .env would stop the start: the environment's value wins.
    const child = start({ LOG_LEVEL: 'warn', HOST: '127.0.0.1' }, cwd);
    const [, port] = await child.waitFor(/http:\/\/127\.0\.0\.1:(\d+)/);
    const base = `http://127.0.0.1:${port}`;
    expect(existsSync(join(cwd, 'from-dotenv', 'connector.db'))).toBe(true);
    expect((await fetch(`${base}/metrics`)).status).toBe(401);
    const scraped = await fetch(`${base}/metrics`, { headers: { Authorization: 'Bearer token-from-dotenv-0123456789' } });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('http_requests_total');
    const stopped = await child.stop();
    expect(stopped.code).toBe(0);
  });

  test('npm run import reads the same .env, so it writes to the database the server reads', async () => {
    const cwd = newDir();
    writeFileSync(join(cwd, '.env'), 'DATABASE_PATH=shared/connector.db\n');
    const child = new Child(importJs, { args: [demoDatasetPath], cwd });
    children.push(child);
    const result = await child.exited;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`into shared/connector.db:`);
    expect(existsSync(join(cwd, 'shared', 'connector.db'))).toBe(true);
  });

  test('a bad value in .env stops the start with the line naming the variable', async () => {
    const cwd = newDir();
    writeFileSync(join(cwd, '.env'), 'POLL_INTERVAL_MS=fast\n');
    expect(await failure({}, cwd)).toBe('Invalid configuration: POLL_INTERVAL_MS must be an integer from 200 to 86400000 (got "fast")');
  });
});

describe('invalid configuration: every invalid variable at once, one line each, exit 1', () => {
  test('three invalid variables give three lines, in the order of the configuration table', async () => {
    const result = await start({ PORT: 'abc', LOG_LEVEL: 'loud', POLL_INTERVAL_MS: '5' }).exited;
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      'Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")',
      'Invalid configuration: POLL_INTERVAL_MS must be an integer from 200 to 86400000 (got "5")',
      'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    ]);
  });

  test('a rule between two variables is reported beside the others', async () => {
    const result = await start({ PORT: 'abc', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' }).exited;
    expect(result.code).toBe(1);
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      'Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")',
      'Invalid configuration: CONNECTOR_SECRET must be set when DATABASE_URL is: every replica must seal and open secrets with the same one',
    ]);
  });
});

describe('start-up errors: one line, exit 1', () => {
  let occupied: Server;
  beforeAll(async () => {
    occupied = createServer();
    await new Promise<void>((resolve) => occupied.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => new Promise<void>((resolve) => occupied.close(() => resolve())));

  test('a port in use names PORT', async () => {
    const port = (occupied.address() as { port: number }).port;
    const line = await failure({ HOST: '127.0.0.1', PORT: String(port), DATABASE_PATH: join(newDir(), 'c.db') });
    expect(line).toBe(`Port ${port} is already in use; set PORT to another port (or 0 for any free port)`);
  });

  test('a database path that cannot be opened names it and DATABASE_PATH', async () => {
    const dir = newDir();
    const hint = '; set DATABASE_PATH to a file this process can create and write';
    expect(await failure({ PORT: '0', DATABASE_PATH: dir })).toBe(`Cannot open the database ${dir} (DATABASE_PATH): unable to open database file${hint}`);
    const notADatabase = join(dir, 'notes.txt');
    writeFileSync(notADatabase, 'these are not the tables you are looking for\n'.repeat(100));
    expect(await failure({ PORT: '0', DATABASE_PATH: notADatabase })).toBe(
      `Cannot open the database ${notADatabase} (DATABASE_PATH): file is not a database${hint}`,
    );
    const underAFile = join(notADatabase, 'connector.db');
    expect(await failure({ PORT: '0', DATABASE_PATH: underAFile })).toBe(
      `Cannot open the database ${underAFile} (DATABASE_PATH): ${notADatabase} is a file, not a folder${hint}`,
    );
  });

  test('a dataset that is not valid JSON names the file, line and column', async () => {
    const dir = newDir();
    const dataset = join(dir, 'catalog.json');
    writeFileSync(dataset, '{\n  "accounts": [\n    {"id": "acc_1", "name": "One"},\n  ]\n}\n');
    const line = await failure({ PORT: '0', DATABASE_PATH: join(dir, 'c.db'), DATASET: dataset });
    expect(line).toBe(`Dataset ${dataset} is not valid JSON at line 4, column 3: trailing comma before ']'`);
  });
});

describe('npm start', () => {
  test('SIGTERM sent to npm itself (as a supervisor or a container runtime sends it) stops the service gracefully', async () => {
    const cwd = newDir();
    const npm = spawn('npm', ['start'], {
      cwd: projectRoot,
      env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATABASE_PATH: join(cwd, 'connector.db'), LOG_LEVEL: 'info', LOG_FORMAT: 'json' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so that whatever it started is killed at the end, even an
      // orphan (the signal under test goes to npm's pid alone).
      detached: true,
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => npm.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 120_000;
      while (!/http:\/\/127\.0\.0\.1:\d+/.test(output) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      const base = /(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
      expect(base).toBeDefined();
      expect((await fetch(`${base}/healthz`)).status).toBe(200);
      npm.kill('SIGTERM');
      const code = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 15_000))]);
      expect(code).not.toBe('hung');
      // The service itself got the signal and shut down; it is not left running, orphaned.
      expect(output).toContain('"signal":"SIGTERM"');
      expect(output).toContain('"msg":"stopped"');
      await expect(fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // the group is gone already
      }
    }
  }, 150_000);
});

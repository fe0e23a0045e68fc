import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { freePortRange, portFree } from '../../src/cluster/ports.js';
import { createTestDatabase } from '../helpers/postgres.js';
import { alive, CliProcess, ensureBuild, processesMentioning, waitFor } from '../helpers/processes.js';

const clusterJs = join(projectRoot, 'dist', 'src', 'cli', 'cluster.js');
const demoKey = 'sk_demo_harbor_ana_all_0123456789';
let tmp: string;

beforeAll(async () => {
  await ensureBuild();
  tmp = mkdtempSync(join(tmpdir(), 'connector-cluster-test-'));
  // Run as root, the embedded server runs as `postgres`, which must reach its data folder.
  chmodSync(tmp, 0o755);
}, 180_000);

afterAll(() => {
  CliProcess.killAll();
  rmSync(tmp, { recursive: true, force: true });
});

function startCluster(args: string[]): CliProcess {
  return new CliProcess(clusterJs, args, { LOG_LEVEL: 'warn' });
}

/** The pids the cluster printed: PostgreSQL's (when embedded) and each replica's. */
function printedPids(output: string): { postgres: number | null; replicas: number[] } {
  const postgres = /^PostgreSQL .* \(embedded\) on 127\.0\.0\.1:\d+, pid (\d+)/m.exec(output);
  const replicas = [...output.matchAll(/^ {2}r\d+ {2}http:\/\/localhost:\d+ {2}pid (\d+)$/gm)].map((m) => Number(m[1]));
  return { postgres: postgres ? Number(postgres[1]) : null, replicas };
}

async function healthz(port: number): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/healthz`);
  await res.arrayBuffer();
  return res.status;
}

async function stopWithSigint(cluster: CliProcess, pids: number[], ports: number[]): Promise<void> {
  const t0 = Date.now();
  cluster.child.kill('SIGINT');
  const exit = await cluster.exited;
  expect({ ...exit, stderr: exit.code === 0 ? '' : cluster.stderr }).toEqual({ code: 0, signal: null, stderr: '' });
  expect(cluster.stdout).toContain('Stopped.');
  expect(Date.now() - t0).toBeLessThan(20_000);
  for (const pid of pids) expect(alive(pid)).toBe(false);
  for (const port of ports) expect(await portFree(port)).toBe(true);
}

describe('npm run cluster (dist/src/cli/cluster.js)', () => {
  test('--replicas 2: embedded PostgreSQL and two replicas on consecutive ports; a dead replica is reported; SIGINT stops all of them', async () => {
    const port = await freePortRange(2);
    const cluster = startCluster(['--replicas', '2', '--port', String(port), '--data', join(tmp, 'data')]);
    await cluster.waitForOutput('Stop everything with Ctrl+C.', 60_000);
    const pids = printedPids(cluster.stdout);
    expect(pids.replicas).toHaveLength(2);
    expect(pids.postgres).not.toBeNull();
    const pgPort = Number(/on 127\.0\.0\.1:(\d+), pid/.exec(cluster.stdout)![1]);
    expect(cluster.stdout).toContain(`Demo key (all scopes): ${demoKey}`);
    expect(cluster.stdout).toContain(`http://localhost:${port}/v1/me`);
    expect(cluster.stdout.match(/Demo catalog loaded/g)).toHaveLength(1); // once, not per replica
    expect(await healthz(port)).toBe(200);
    expect(await healthz(port + 1)).toBe(200);
    for (const pid of [pids.postgres!, ...pids.replicas]) expect(alive(pid)).toBe(true);

    process.kill(pids.replicas[1]!, 'SIGKILL');
    await waitFor('the death report', () => cluster.stderr.includes(`replica r2 (pid ${pids.replicas[1]}`), 10_000);
    expect(cluster.stderr).toContain('died: signal SIGKILL');
    expect(await healthz(port)).toBe(200);

    await stopWithSigint(cluster, [pids.postgres!, ...pids.replicas], [port, port + 1, pgPort]);
    expect(existsSync(join(tmp, 'data', 'postgres', 'PG_VERSION'))).toBe(true);
  }, 90_000);

  test('a second start reuses the kept PostgreSQL data and its secrets', async () => {
    const port = await freePortRange(1);
    const cluster = startCluster(['--replicas', '1', '--port', String(port), '--data', join(tmp, 'data')]);
    await cluster.waitForOutput('Stop everything with Ctrl+C.', 60_000);
    const pids = printedPids(cluster.stdout);
    const me = await fetch(`http://127.0.0.1:${port}/v1/me`, { headers: { 'X-API-Key': demoKey } });
    expect(me.status).toBe(200);
    await stopWithSigint(cluster, [pids.postgres!, ...pids.replicas], [port]);
  }, 90_000);

  test('--database-url: no PostgreSQL of its own, the replicas get that URL', async () => {
    const db = await createTestDatabase();
    try {
      const port = await freePortRange(1);
      const cluster = startCluster(['--replicas', '1', '--port', String(port), '--data', join(tmp, 'external'), '--database-url', db.url]);
      await cluster.waitForOutput('Stop everything with Ctrl+C.', 60_000);
      expect(cluster.stdout).toContain(`DATABASE_URL=${db.url}`);
      expect(cluster.stdout).not.toContain('(embedded)');
      expect(existsSync(join(tmp, 'external', 'postgres'))).toBe(false);
      await stopWithSigint(cluster, printedPids(cluster.stdout).replicas, [port]);
    } finally {
      await db.drop();
    }
  }, 90_000);

  test('SIGINT while PostgreSQL is still starting: the server it brings up is stopped too', async () => {
    // The kept data folder of the first test: no initdb, the first process is the server itself.
    const data = join(tmp, 'data');
    const cluster = startCluster(['--replicas', '1', '--port', String(await freePortRange(1)), '--data', data]);
    await cluster.waitForOutput('Starting PostgreSQL', 30_000);
    await waitFor('the server process', () => processesMentioning(join(data, 'postgres')).length > 0, 30_000);
    cluster.child.kill('SIGINT');
    const exit = await cluster.exited;
    // Its stderr in the failure message: a start that failed on its own exits 1 with the reason.
    expect({ code: exit.code, stderr: exit.code === 0 ? '' : cluster.stderr }).toEqual({ code: 0, stderr: '' });
    await waitFor('no process left on that data folder', () => processesMentioning(join(data, 'postgres')).length === 0, 10_000);
  }, 60_000);

  test('bad arguments print the usage and exit 1', async () => {
    for (const args of [['--replicas', '0'], ['--replicas', 'two'], ['--database-url', 'mysql://x'], ['--bogus']]) {
      const cluster = startCluster(args);
      expect((await cluster.exited).code).toBe(1);
      expect(cluster.stderr).toContain('Usage: npm run cluster');
    }
  });
});

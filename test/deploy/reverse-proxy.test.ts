import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { Child, mainJs } from '../helpers/child.js';
import { createTestDatabase, type TestDatabase } from '../helpers/postgres.js';
import { ensureBuild } from '../helpers/processes.js';

/**
 * deploy/caddy/Caddyfile for real (docs/deploy.md, "Behind a reverse proxy"): Caddy, with the
 * very file the Compose setup mounts, ends TLS on loopback with its own local authority in front
 * of two replicas on one PostgreSQL database; the answers are verified against that authority,
 * spread over both replicas, /metrics stays off the public side, plain HTTP is redirected, and a
 * replica that stops is left out while the other answers. Skipped with a note without Caddy.
 */

const hasCaddy = spawnSync('caddy', ['version']).status === 0;
if (!hasCaddy) console.warn('caddy not found on PATH: skipping the reverse-proxy test of deploy/caddy/Caddyfile (apt-get install caddy)');
const maybe = hasCaddy ? describe : describe.skip;

const demoKey = 'sk_demo_harbor_ana_all_0123456789';
let tmp: string;
let database: TestDatabase | null = null;
const replicas: Child[] = [];
let caddy: ChildProcess | null = null;
let caddyOutput = '';
let httpsPort = 0;
let httpPort = 0;
let rootCa = '';

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** GET through Caddy over TLS, verified against Caddy's local authority for `localhost`. */
function viaProxy(path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port: httpsPort, path, servername: 'localhost', ca: rootCa, headers: { Host: `localhost:${httpsPort}`, ...headers }, agent: false },
      (res) => {
        let body = '';
        res.on('data', (chunk) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('no answer through Caddy in 10 s')));
    req.end();
  });
}

/** Request log lines of one route in a replica's output. */
const served = (replica: Child, route: string) => replica.stdout.split('\n').filter((line) => line.includes(`"route":"${route}"`)).length;

beforeAll(async () => {
  if (!hasCaddy) return;
  tmp = mkdtempSync(join(tmpdir(), 'connector-caddy-'));
  await ensureBuild();
  database = await createTestDatabase();
  for (let i = 0; i < 2; i += 1) {
    const port = await freePort();
    const replica = new Child(mainJs, {
      env: {
        DATABASE_URL: database.url,
        CONNECTOR_SECRET: 'a1'.repeat(32),
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        TRUST_PROXY: '1',
      },
      timeoutMs: 300_000,
    });
    replicas.push(replica);
    // One after the other: the first imports the demo dataset.
    await replica.waitFor(/"msg":"listening"/, 60_000);
    (replica as Child & { port?: number }).port = port;
  }
  [httpsPort, httpPort] = [await freePort(), await freePort()];
  const upstreams = replicas.map((r) => `127.0.0.1:${(r as Child & { port?: number }).port}`).join(' ');
  caddy = spawn('caddy', ['run', '--config', join(projectRoot, 'deploy', 'caddy', 'Caddyfile'), '--adapter', 'caddyfile'], {
    env: {
      PATH: process.env.PATH,
      HOME: tmp,
      XDG_DATA_HOME: join(tmp, 'data'),
      XDG_CONFIG_HOME: join(tmp, 'config'),
      CONNECTOR_DOMAIN: 'localhost',
      CONNECTOR_UPSTREAMS: upstreams,
      CADDY_HTTPS_PORT: String(httpsPort),
      CADDY_HTTP_PORT: String(httpPort),
      CADDY_ADMIN: 'off',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 300_000,
    killSignal: 'SIGKILL',
  });
  caddy.stdout!.on('data', (chunk) => (caddyOutput += chunk));
  caddy.stderr!.on('data', (chunk) => (caddyOutput += chunk));
  const rootPath = join(tmp, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
  const until = Date.now() + 60_000;
  for (;;) {
    if (existsSync(rootPath)) {
      rootCa = readFileSync(rootPath, 'utf8');
      const ok = await viaProxy('/healthz').then(
        (r) => r.status === 200,
        () => false,
      );
      if (ok) break;
    }
    if (Date.now() > until || caddy.exitCode !== null) throw new Error(`Caddy did not serve https://localhost:${httpsPort}:\n${caddyOutput}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}, 240_000);

afterAll(async () => {
  caddy?.kill('SIGTERM');
  for (const replica of replicas) await replica.stop();
  await database?.drop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
}, 60_000);

maybe('Caddy in front of two replicas, with deploy/caddy/Caddyfile', () => {
  test('ends TLS with a certificate for the domain and spreads requests over both replicas', async () => {
    const before = replicas.map((r) => served(r, '/v1/me'));
    for (let i = 0; i < 10; i += 1) {
      const res = await viaProxy('/v1/me', { 'X-API-Key': demoKey });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body).account.name).toBe('Harbor Street Diner');
    }
    // Both replicas answered some (round robin); their log lines are written as they answer.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = replicas.map((r, i) => served(r, '/v1/me') - before[i]!);
    expect(after.reduce((a, b) => a + b, 0)).toBe(10);
    expect(Math.min(...after)).toBeGreaterThan(0);
  });

  test('with TRUST_PROXY=1 the replicas log the client Caddy saw; an X-Forwarded-For the client sends itself is not believed', async () => {
    const marker = `/v1/me?probe=${Date.now()}`;
    expect((await viaProxy(marker, { 'X-API-Key': demoKey, 'X-Forwarded-For': '203.0.113.9' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const lines = replicas.flatMap((r) => r.stdout.split('\n')).filter((line) => line.includes('"route":"/v1/me"'));
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => line.includes('"client":"127.0.0.1"'))).toBe(true);
    expect(lines.some((line) => line.includes('203.0.113.9'))).toBe(false);
  });

  test('keeps /metrics off the public side and redirects plain HTTP to HTTPS', async () => {
    expect((await viaProxy('/metrics')).status).toBe(404);
    const redirect = await new Promise<{ status: number; location?: string }>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: httpPort, path: '/healthz', headers: { Host: 'localhost' }, agent: false }, (res) => {
        res.resume();
        resolve({ status: res.statusCode!, location: res.headers.location });
      })
        .on('error', reject)
        .end();
    });
    expect(redirect.status).toBe(308);
    expect(redirect.location).toMatch(/^https:\/\/localhost(:\d+)?\/healthz$/);
  });

  test('a replica that stops is left out: every request is still answered by the other', async () => {
    expect((await replicas[0]!.stop()).code).toBe(0);
    for (let i = 0; i < 6; i += 1) expect((await viaProxy('/v1/me', { 'X-API-Key': demoKey })).status).toBe(200);
  });
});

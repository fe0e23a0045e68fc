import { startChild, type ServerChild } from '../lib/child.js';
import type { Engine } from '../../src/db/database.js';
import { benchEngines } from '../lib/bench-database.js';
import type { HeapFigures } from '../lib/connector.js';
import { commandFor, progress, type BenchRow, type RowOutput } from '../lib/row.js';
import { fmtInt, fmtMs, median } from '../lib/stats.js';
import type { TableRow } from '../lib/table.js';
import type { PollAnswer, PollerInfo, PollerOptions, UpstreamCounts } from '../servers/poller.js';

/**
 * Benchmark `poller`: one key with 10,000 devices upstream. A fake upstream (the embedded app
 * over 10,000 generated devices, counting calls) and a connector in upstream mode, each in its
 * own child process. The key is enrolled as the polling trigger does it (confirm with the
 * upstream, then watch + baseline poll), then the poller's own loop runs until idle (`runUntilIdle()`, the key made due first) 10 times with
 * nothing changing, once after 1 % of the devices went offline and once after they came back.
 * Reported: upstream GET /devices per poll (target 10: page_size=1000), poll time, the events
 * those polls emitted, and memory per tracked device: heap (after a full GC) and SQLite bytes.
 */

const name = 'poller';
const deviceCount = 10_000;
const steadyPolls = 10;
const flipShare = 0.01;
const heartbeatTimeoutMs = 300_000;
const expectedRequests = 10;

type Cpu = { cpuMicros: number; wallMs: number };
interface DbFigures {
  bytes: number;
  tables: Record<string, number> | null;
  snapshotRows: number;
  eventRows: number;
}
interface Measured extends PollAnswer {
  label: string;
  requests: number;
  pages: string[];
  connectorCpuMs: number;
  upstreamCpuMs: number;
}

const kib = (bytes: number) => `${(bytes / 1024).toFixed(0)} KiB`;
const perDevice = (bytes: number) => `${bytes >= 0 ? '+' : ''}${fmtInt(bytes / deviceCount)} B`;

/** Forks the connector with --expose-gc: NODE_OPTIONS is read by fork() synchronously, then restored. */
function startWithGc(options: PollerOptions): Promise<ServerChild<PollerInfo>> {
  const saved = process.env.NODE_OPTIONS;
  process.env.NODE_OPTIONS = `${saved ?? ''} --expose-gc`.trim();
  try {
    return startChild<PollerInfo>(new URL('../servers/poller.js', import.meta.url), options);
  } finally {
    if (saved === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = saved;
  }
}

async function run(): Promise<RowOutput> {
  const out: RowOutput = { rows: [], notes: [] };
  for (const engine of benchEngines()) {
    const part = await runOn(engine);
    out.rows.push(...part.rows);
    out.notes.push(...part.notes);
  }
  return out;
}

async function runOn(engine: Engine): Promise<RowOutput> {
  progress(`${name} [${engine}]: starting an upstream with ${fmtInt(deviceCount)} devices for one key`);
  const children: Array<ServerChild<PollerInfo>> = [];
  try {
    const up = await startChild<PollerInfo>(new URL('../servers/poller.js', import.meta.url), {
      role: 'upstream',
      devices: deviceCount,
      heartbeatTimeoutMs,
    } satisfies PollerOptions);
    children.push(up);
    const conn = await startWithGc({ role: 'connector', engine, upstreamUrl: up.info.url!, heartbeatTimeoutMs });
    children.push(conn);

    const counts = () => up.call<UpstreamCounts>('counts');
    const heap = () => conn.call<HeapFigures>('heap');
    const dbSize = () => conn.call<DbFigures>('dbSize');

    // The trigger route asks the upstream about the key first; doing it before the first heap
    // figure keeps one-off initialisation (fetch pool, schemas, JIT) out of the per-device one.
    await conn.call('confirm');
    const heapBefore = await heap();
    const dbBefore = await dbSize();

    progress(`${name}: enrolling the key (baseline poll)`);
    const c0 = await counts();
    const enrol = await conn.call<{ ms: number; watch: boolean }>('enrol');
    const c1 = await counts();
    if (!enrol.watch) throw new Error('enrolment recorded no baseline');
    const baselineRequests = c1.deviceLists - c0.deviceLists;
    const heapAfterBaseline = await heap();
    const dbAfterBaseline = await dbSize();

    const measured: Measured[] = [];
    const poll = async (label: string): Promise<Measured> => {
      const [before, cuBefore, ccBefore] = await Promise.all([counts(), up.call<Cpu>('cpu'), conn.call<Cpu>('cpu')]);
      const answer = await conn.call<PollAnswer>('poll');
      const [after, cuAfter, ccAfter] = await Promise.all([counts(), up.call<Cpu>('cpu'), conn.call<Cpu>('cpu')]);
      const pages = Object.keys(after.pages).filter((p) => (after.pages[p] ?? 0) > (before.pages[p] ?? 0));
      const m: Measured = {
        ...answer,
        label,
        requests: after.deviceLists - before.deviceLists,
        pages,
        connectorCpuMs: (ccAfter.cpuMicros - ccBefore.cpuMicros) / 1000,
        upstreamCpuMs: (cuAfter.cpuMicros - cuBefore.cpuMicros) / 1000,
      };
      measured.push(m);
      return m;
    };

    progress(`${name}: ${steadyPolls} polls with no change`);
    const steady: Measured[] = [];
    let heapMid: HeapFigures | undefined;
    for (let i = 0; i < steadyPolls; i += 1) {
      steady.push(await poll(`steady ${i + 1}`));
      if (i + 1 === steadyPolls / 2) heapMid = await heap(); // is the heap still growing with polls?
    }

    const flipCount = Math.round(deviceCount * flipShare);
    const stride = Math.floor(deviceCount / flipCount);
    const flipped = Array.from({ length: flipCount }, (_, i) => i * stride + (i % stride)); // spread over every page
    progress(`${name}: ${flipCount} devices go offline, poll; they come back, poll`);
    await up.call('setHeartbeats', { indexes: flipped, ageMs: heartbeatTimeoutMs + 60_000 });
    const offline = await poll('1 % offline');
    await up.call('setHeartbeats', { indexes: flipped, ageMs: 0 });
    const online = await poll('1 % back online');
    const types = await conn.call<Record<string, number>>('eventTypes');

    const heapAfter = await heap();
    const dbAfter = await dbSize();
    const final = await counts();

    // ---- figures
    const allRequestsOk = baselineRequests === expectedRequests && measured.every((m) => m.requests === expectedRequests);
    const failedPolls = measured.filter((m) => m.failed > 0 || m.keys !== 1).length;
    const steadyMs = steady.map((m) => m.ms);
    const eventsOk =
      steady.every((m) => m.events === 0) &&
      offline.events === flipCount &&
      online.events === flipCount &&
      types['device.offline'] === flipCount &&
      types['device.online'] === flipCount;
    const retained = heapAfter.heapUsed - heapBefore.heapUsed;
    const retainedBaseline = heapAfterBaseline.heapUsed - heapBefore.heapUsed;
    const peak = Math.max(...steady.map((m) => m.peakHeapUsed)) - heapBefore.heapUsed;
    const dbGrowth = dbAfterBaseline.bytes - dbBefore.bytes;
    const snapshotBytes = dbAfter.tables?.device_snapshots;
    const cmd = `\`${commandFor(name)}\``;
    const requestsText = [...new Set([baselineRequests, ...measured.map((m) => m.requests)])].join(', ');

    const rows: TableRow[] = [
      {
        row: 3,
        benchmark: `[${engine}] poller: one key with ${fmtInt(deviceCount)} devices upstream → upstream \`GET /devices\` requests per poll`,
        result: `**${requestsText} per poll** in each of ${measured.length + 1} polls (baseline + ${steadyPolls} unchanged + 2 with changes; page_size=1000, pages 1–${expectedRequests}, 4 at a time)${failedPolls ? ` · ${failedPolls} poll(s) FAILED` : ''}`,
        target: `10 — ${allRequestsOk && failedPolls === 0 ? '✅ met' : '❌ not met'}`,
        command: cmd,
      },
      {
        row: 3,
        benchmark: `[${engine}] poll time, ${fmtInt(deviceCount)} devices (\`runUntilIdle()\`: 10 upstream pages + diff + snapshot transaction)`,
        result: `**median ${fmtMs(median(steadyMs))}, max ${fmtMs(Math.max(...steadyMs))}** over ${steadyPolls} unchanged polls · baseline (first) poll ${fmtMs(enrol.ms)} · per poll CPU: connector ${fmtMs(median(steady.map((m) => m.connectorCpuMs)))}, upstream ${fmtMs(median(steady.map((m) => m.upstreamCpuMs)))} (medians)`,
        target: `— (runs every POLL_INTERVAL_MS, default 30 s)`,
        command: cmd,
      },
      {
        row: 3,
        benchmark: `[${engine}] events: 1 % (${flipCount}) of the devices go offline between two polls, then come back`,
        result: `offline poll: **${offline.events} \`device.offline\`** in ${fmtMs(offline.ms)} · online poll: **${online.events} \`device.online\`** in ${fmtMs(online.ms)} · 0 events in each unchanged poll: ${steady.every((m) => m.events === 0) ? 'yes' : 'NO'}`,
        target: `exactly ${flipCount} each — ${eventsOk ? '✅ met' : '❌ not met'}`,
        command: cmd,
      },
      {
        row: 3,
        benchmark: `[${engine}] memory per tracked device (connector process; the snapshot lives in the database)`,
        result:
          `heap retained: **≤ ${fmtInt(Math.max(0, retained) / deviceCount)} B/device** (upper bound: all of the heapUsed growth after full GC, ${kib(heapBefore.heapUsed)} before enrolment → ${kib(heapAfter.heapUsed)} after ${measured.length + 1} polls; ${kib(heapMid!.heapUsed)} after poll ${steadyPolls / 2 + 1}) · ` +
          `transient during a poll: ${perDevice(peak)}/device (peak sampled heapUsed above the idle baseline: live data + garbage not yet collected) · ` +
          `${engine === 'sqlite' ? 'SQLite' : 'PostgreSQL'}: **${perDevice(dbGrowth)}/device** (${fmtInt(dbAfterBaseline.snapshotRows)} snapshot rows${snapshotBytes !== undefined ? `; device_snapshots ${kib(snapshotBytes)} = ${fmtInt(snapshotBytes / deviceCount)} B/device` : ''})`,
        target: '— (no target)',
        command: cmd,
      },
    ];

    const notes = [
      `${name} [${engine}]: upstream = the embedded app over ${fmtInt(deviceCount)} generated devices of one key (import ${fmtMs(up.info.importMs ?? NaN)}), its own process, logging at warn; connector in upstream mode (DEVICE_API_URL), its own process, ${engine === 'sqlite' ? 'SQLite file in a temp folder' : 'a fresh PostgreSQL database'}, logging at info, background work not started; polls driven by \`services.poller.runUntilIdle()\` with the key due; the key enrolled with \`enrolKey\` (what \`GET /v1/triggers/device-status\` does) after one \`confirmDeviceKey\` call.`,
      `${name} [${engine}]: per poll (ms): ${measured.map((m) => `${m.label} ${m.ms.toFixed(1)} [conn CPU ${m.connectorCpuMs.toFixed(0)}, upstream CPU ${m.upstreamCpuMs.toFixed(0)}, ${m.requests} req, ${m.events} ev]`).join('; ')}.`,
      `${name} [${engine}]: upstream calls in all: ${final.total} (GET /devices ${final.deviceLists}, statuses ${JSON.stringify(final.statuses)}); pages of the last poll: ${(measured.at(-1)?.pages ?? []).join(', ')}.`,
      `${name} [${engine}]: heap (heapUsed after 2 full GCs, ${heapBefore.gc}): before enrolment ${kib(heapBefore.heapUsed)}, after the baseline ${kib(heapAfterBaseline.heapUsed)} (${perDevice(retainedBaseline)}/device), after poll ${steadyPolls / 2 + 1} ${kib(heapMid!.heapUsed)}, after all polls ${kib(heapAfter.heapUsed)}; rss ${kib(heapBefore.rss)} → ${kib(heapAfter.rss)}; peak sampled heapUsed during unchanged polls ${kib(Math.max(...steady.map((m) => m.peakHeapUsed)))}. The poller keeps no per-device state in memory between polls (it reads the snapshot from the database each time), so the retained figure is expected to be ~0 and the per-poll working set is the transient one.`,
      `${name} [${engine}]: database (${engine === 'sqlite' ? 'page_count × page_size, WAL included' : 'pg_database_size'}): ${kib(dbBefore.bytes)} before, ${kib(dbAfterBaseline.bytes)} after the baseline (${fmtInt(dbAfterBaseline.snapshotRows)} snapshot rows), ${kib(dbAfter.bytes)} after all polls (${fmtInt(dbAfter.eventRows)} events, payload = full device JSON)${
        dbAfter.tables
          ? `; per table: ${Object.entries(dbAfter.tables)
              .map(([t, b]) => `${t} ${kib(b)}`)
              .join(', ')}`
          : '; dbstat not available'
      }.`,
    ];
    return { rows, notes };
  } finally {
    for (const child of children.reverse()) await child.stop();
  }
}

export const poller: BenchRow = {
  name,
  contractRow: 3,
  description: 'poller: one key with 10,000 upstream devices → upstream requests per poll, poll time, memory per tracked device',
  run,
};

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchEngines } from '../lib/bench-database.js';
import { commandFor, progress, type BenchRow, type RowOutput } from '../lib/row.js';
import { scaleDevices, scaleGroups, scaleSearches, smallAccounts, smallDevices, writeScaleDataset } from '../lib/scale-dataset.js';
import { runScale, scale, type ScaleMeasured, type Timed } from '../lib/scale-scenario.js';
import { many, runManyAccounts, type ManyAccountsMeasured } from '../lib/many-accounts.js';
import { fmtInt, fmtMs, percentile } from '../lib/stats.js';
import type { TableRow } from '../lib/table.js';
import type { RequestSample } from '../servers/scale-probe.js';

/**
 * Benchmark `scale` (run only when named: `npm run bench -- scale`): one account with 100,000
 * devices and 20,000 groups beside small accounts, on each engine, against the service as
 * `npm start` runs it. The scenario is bench/lib/scale-scenario.ts; this module turns what it
 * measured into the table's lines and notes.
 */
const name = 'scale';
const targets = { dropdownMs: 1_000, endToEndMs: 30_000, probeMs: 250, lagMs: 50, rssBytes: 300 * 1024 * 1024, fairnessMs: 5_000 };
const mib = (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1024 / 1024).toFixed(0)} MB` : 'n/a');
const secs = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : 'n/a');
const mark = (met: boolean) => (met ? '✅' : '❌');

/** The phase a time falls in (marks are phase starts; `end` closes the last). */
function phaseOf(m: ScaleMeasured, at: number): string | null {
  let phase: string | null = null;
  for (const [label, start] of m.marks) if (at >= start) phase = label === 'end' ? null : label;
  return phase;
}

function worst(samples: RequestSample[]): RequestSample | undefined {
  return samples.reduce<RequestSample | undefined>((w, s) => (!w || s.ms > w.ms ? s : w), undefined);
}

/** Background poll rounds seen between two scrapes: each round's time (the mean when several ended in one window). */
function pollRounds(m: ScaleMeasured): Array<{ at: number; ms: number; n: number }> {
  const rounds = [];
  const s = m.probe.scrapes;
  for (let i = 1; i < s.length; i += 1) {
    const n = s[i]!.pollCount - s[i - 1]!.pollCount;
    if (n > 0) rounds.push({ at: s[i]!.at, ms: (s[i]!.pollSum - s[i - 1]!.pollSum) / n, n });
  }
  return rounds;
}

function dropdownText(first: Timed, search: Timed, q: string, total: number, found: number): string {
  const ok = (t: Timed, n: number) => (t.status === 200 && t.total === n ? '' : ` (⚠ ${t.status}, ${t.total} of ${n})`);
  return `first page (limit=${scale.pageLimit}) **${fmtMs(first.ms)}**${ok(first, total)} · search \`q=${q}\` (another key of the user, its list cold too) **${fmtMs(search.ms)}**${ok(search, found)}`;
}

function linesFor(m: ScaleMeasured): { rows: TableRow[]; notes: string[] } {
  const e = m.engine;
  const cmd = `\`${commandFor(name)}\``;
  const d = m.dropdowns;
  const inScenario = (at: number) => phaseOf(m, at) !== null;
  const requests = m.probe.requests.filter((r) => inScenario(r.at));
  const healthz = requests.filter((r) => r.kind === 'healthz');
  const small = requests.filter((r) => r.kind === 'small');
  const phases = m.marks.filter(([l]) => l !== 'end').map(([l]) => l);
  const byPhase = (samples: RequestSample[]) =>
    phases
      .map((p) => {
        const w = worst(samples.filter((s) => phaseOf(m, s.at) === p));
        return `${p} ${w ? fmtMs(w.ms) : 'n/a'}`;
      })
      .join(', ');
  const wh = worst(healthz);
  const ws = worst(small);
  const failed = (xs: RequestSample[]) => xs.filter((r) => r.status < 200 || r.status >= 400).length;
  const scrapes = m.probe.scrapes.filter((s) => inScenario(s.at));
  const lag = Math.max(...scrapes.map((s) => s.lagP99));
  const lagByPhase = phases.map((p) => `${p} ${fmtMs(Math.max(...scrapes.filter((s) => phaseOf(m, s.at) === p).map((s) => s.lagP99)))}`).join(', ');
  const rssByPhase = phases.map((p) => `${p} ${mib(Math.max(...m.probe.rss.filter((s) => phaseOf(m, s.at) === p).map((s) => s.rss)))}`).join(', ');
  const rounds = pollRounds(m).filter((r) => ['poll', 'offline'].includes(phaseOf(m, r.at) ?? ''));
  const longestPoll = Math.max(...rounds.map((r) => r.ms));
  const overdue = Math.max(...scrapes.map((s) => s.overdue));
  const failedPolls = Math.max(0, ...m.probe.scrapes.map((s) => s.failedPolls).filter(Number.isFinite));
  const o = m.offline;
  const f = m.fairness;
  const dropdownsMet = (a: Timed, b: Timed) => a.ms <= targets.dropdownMs && b.ms <= targets.dropdownMs && a.status === 200 && b.status === 200;
  const rows: TableRow[] = [
    {
      row: 7,
      benchmark: `[${e}] scale: cold device dropdown of the account with ${fmtInt(scaleDevices)} devices`,
      result: `${dropdownText(d.devicesFirst, d.devicesSearch, scaleSearches.devices.q, scaleDevices, scaleSearches.devices.matches)} · the first page again right after ${fmtMs(d.devicesWarm.ms)} (X-Cache ${d.devicesWarm.cache || 'n/a'})`,
      target: `≤ 1 s each ${mark(dropdownsMet(d.devicesFirst, d.devicesSearch))}`,
      command: cmd,
    },
    {
      row: 7,
      benchmark: `[${e}] scale: cold group dropdown of its menu of ${fmtInt(scaleGroups)} groups`,
      result: dropdownText(d.groupsFirst, d.groupsSearch, scaleSearches.groups.q, scaleGroups, scaleSearches.groups.matches),
      target: `≤ 1 s each ${mark(dropdownsMet(d.groupsFirst, d.groupsSearch))}`,
      command: cmd,
    },
    {
      row: 7,
      benchmark: `[${e}] scale: one background poll of that key (${fmtInt(scaleDevices)} devices, POLL_INTERVAL_MS=${scale.pollIntervalMs})`,
      result:
        `longest **${secs(longestPoll)}** over ${rounds.length} poll(s) (${rounds.map((r) => secs(r.ms)).join(', ')}; poller_round_duration_seconds between scrapes) · ` +
        `enrolment (\`GET /v1/triggers/device-status\`, baseline poll of every device) ${secs(m.enrolMs)} (${m.enrolStatus}) · most overdue key ${secs(overdue)}`,
      target: `≤ its interval (${secs(scale.pollIntervalMs)}) ${mark(rounds.length > 0 && longestPoll <= scale.pollIntervalMs && m.enrolStatus === 200)}`,
      command: cmd,
    },
    {
      row: 7,
      benchmark: `[${e}] scale: ${fmtInt(scale.offlineDevices)} of its devices go offline, delivered end to end to a local receiver`,
      result:
        `**${secs(o.endToEndMs)}** from offline to the last arrival · events written ${secs(o.detectFirstMs)}–${secs(o.detectLastMs)} after it (waiting for the next poll) · ` +
        `${fmtInt(o.delivered)}/${fmtInt(scale.offlineDevices)} delivered, ${fmtInt(o.verified)} signatures verified, ${o.duplicates} duplicates`,
      target: `≤ 30 s, all delivered and verified ${mark(o.complete && o.endToEndMs <= targets.endToEndMs && o.verified === scale.offlineDevices && o.duplicates === 0)}`,
      command: cmd,
    },
    {
      row: 7,
      benchmark: `[${e}] scale: meanwhile, the worst \`/healthz\` (every ${scale.probeEveryMs} ms, whole scenario)`,
      result: `**${fmtMs(wh?.ms ?? NaN)}** of ${fmtInt(healthz.length)} (p99 ${fmtMs(
        percentile(
          healthz.map((r) => r.ms),
          99,
        ),
      )}; worst per phase: ${byPhase(healthz)})${failed(healthz) ? ` · ${failed(healthz)} failed` : ''}`,
      target: `≤ 250 ms ${mark(healthz.length > 0 && (wh?.ms ?? Infinity) <= targets.probeMs && failed(healthz) === 0)}`,
      command: cmd,
    },
    {
      row: 7,
      benchmark: `[${e}] scale: meanwhile, the worst small account's request (${smallAccounts} accounts × ${smallDevices} devices; dropdowns and \`GET /devices\`, every ${scale.probeEveryMs} ms)`,
      result: `**${fmtMs(ws?.ms ?? NaN)}** (${ws?.what ?? 'none'}) of ${fmtInt(small.length)} (p99 ${fmtMs(
        percentile(
          small.map((r) => r.ms),
          99,
        ),
      )}; worst per phase: ${byPhase(small)})${failed(small) ? ` · ${failed(small)} failed` : ''}`,
      target: `≤ 250 ms ${mark(small.length > 0 && (ws?.ms ?? Infinity) <= targets.probeMs && failed(small) === 0)}`,
      command: cmd,
    },
    {
      row: 7,
      benchmark: `[${e}] scale: event-loop lag p99 (\`nodejs_eventloop_lag_p99_seconds\`, /metrics scraped every ${scale.scrapeEveryMs / 1000} s)`,
      result: `worst scrape **${fmtMs(lag)}** of ${scrapes.length} (per phase: ${lagByPhase}) · worst max ${fmtMs(Math.max(...scrapes.map((s) => s.lagMax)))}`,
      target: `≤ 50 ms ${mark(scrapes.length > 0 && lag <= targets.lagMs)}`,
      command: cmd,
    },
    {
      row: 7,
      benchmark: `[${e}] scale: peak resident memory of the service process`,
      result: `**${mib(m.peakRss)}** (VmHWM, from its start to the end of the scenario; sampled every 100 ms, the peak per phase: ${rssByPhase})`,
      target: `≤ 300 MB ${mark(m.peakRss <= targets.rssBytes)}`,
      command: cmd,
    },
    {
      row: 7,
      benchmark: `[${e}] scale: ${fmtInt(scale.backlogDevices)} of its devices go offline at once (a mass outage) → queued by the next poll`,
      result:
        `**${fmtInt(f.atOnce.queued)} of ${fmtInt(scale.backlogDevices)}** deliveries queued ${secs(f.atOnce.waitedMs)} after they went offline · ` +
        `failed polls by the end: ${fmtInt(failedPolls)} (poller_keys_polled_total{outcome="failed"})` +
        (f.batches ? ` · so the backlog below was queued ${fmtInt(scale.backlogBatch)} devices a poll, in ${f.batches} polls` : ''),
      target: `all, within ${secs(2.5 * scale.pollIntervalMs)} ${mark(f.atOnce.queued >= scale.backlogDevices)}`,
      command: cmd,
    },
    {
      row: 7,
      benchmark: `[${e}] scale: fairness: ${fmtInt(scale.backlogDevices)} deliveries of one key queued at an origin (answering after ${scale.slowAnswerMs} ms), another key's first delivery to it`,
      result:
        `**${secs(f.firstMs)}** from its event written to its arrival (${secs(f.offlineToFirstMs)} from the device going offline, the poll included) · ${f.verified ? 'signature verified' : 'signature NOT verified'} · ` +
        `the other key: ${fmtInt(f.queued)} queued ${secs(f.queuedMs)} after its devices went offline, ${fmtInt(f.bigDelivered)} delivered before, ${fmtInt(f.backlogLeft)} still pending after`,
      target: `≤ 5 s ${mark(f.complete && f.verified && f.firstMs <= targets.fairnessMs && f.queued >= scale.backlogDevices)}`,
      command: cmd,
    },
  ];
  const notes = [
    `${name} [${e}]: \`npm run import\` of the dataset ${secs(m.importMs)} (its peak resident memory ${mib(m.importPeakRss)}); the service (\`node dist/src/main.js\`, ${e === 'sqlite' ? 'SQLite file in a temp folder' : 'a fresh PostgreSQL database'}, LOG_LEVEL=info) answered /healthz ${secs(m.startMs)} after it was started. ${m.planner ? `PostgreSQL planner: ${m.planner}. ` : ''}Phases began at +${m.marks.map(([l, at]) => `${l} ${((at - m.marks[0]![1]) / 1000).toFixed(1)} s`).join(', +')}.`,
  ];
  return { rows, notes };
}

/** The many-accounts line (bench/lib/many-accounts.ts): polls a second ÷ needed, and the worst gap through a mass outage. */
function manyAccountsLine(m: ManyAccountsMeasured): TableRow {
  const ratio = m.capacity / m.needed;
  const met = ratio >= 2 && m.worstGapMs <= 1.5 * many.intervalMs && m.delivered === m.expectedDeliveries && m.duplicates === 0;
  return {
    row: 7,
    benchmark: `[${m.engine}] scale: many accounts: ${fmtInt(many.keys)} keys × ${many.devicesPerKey} upstream devices, each with a hook, one replica, POLL_INTERVAL_MS=${many.intervalMs}`,
    result:
      `polls a second ÷ needed **${ratio.toFixed(2)}×** (${m.capacity.toFixed(0)}/s with every key due at once, ${m.needed}/s needed; the service's CPU ${m.cpuPerPollMs.toFixed(2)} ms a poll) · ` +
      `worst gap between two polls of a key **${secs(m.worstGapMs)}** (${m.lateGaps} of ${fmtInt(m.gaps)} over 1.5 intervals; ${m.windowRate.toFixed(0)} polls/s; the service's CPU ${secs(m.windowCpuMs)}, ${(100 * m.windowCpuShare).toFixed(0)} % of a core, ${(m.windowCpuMs / Math.max(1, m.windowRate * ((many.windowIntervals * many.intervalMs) / 1000))).toFixed(2)} ms a poll with its records and deliveries) through a mass outage (${many.outageDevices} devices of every account offline, back an interval later) with another process spinning on the cores · ` +
      `${fmtInt(m.delivered)}/${fmtInt(m.expectedDeliveries)} delivered, ${m.duplicates} duplicates · enrolment ${secs(m.enrolMs)}`,
    target: `≥ 2× and ≤ 1.5 intervals (${secs(1.5 * many.intervalMs)}), all delivered once ${mark(met)}`,
    command: `\`${commandFor(name)}\``,
  };
}

/** BENCH_SCALE_ONLY=many-accounts (or big-account) runs one part of the row. */
function parts(): { big: boolean; many: boolean } {
  const only = process.env.BENCH_SCALE_ONLY ?? '';
  if (only !== '' && only !== 'many-accounts' && only !== 'big-account') throw new Error('BENCH_SCALE_ONLY must be many-accounts or big-account');
  return { big: only !== 'many-accounts', many: only !== 'big-account' };
}

async function run(): Promise<RowOutput> {
  const scratch = mkdtempSync(join(tmpdir(), 'connector-bench-scale-'));
  try {
    const file = join(scratch, 'dataset.json');
    const { big, many: manyAccounts } = parts();
    const t0 = performance.now();
    const bytes = big ? writeScaleDataset(file) : 0;
    const genMs = performance.now() - t0;
    if (big) progress(`${name}: dataset written (${mib(bytes)}) in ${secs(genMs)}`);
    const out: RowOutput = {
      rows: [],
      notes: !big
        ? []
        : [
            `${name}: dataset generated and written as it is made (${mib(bytes)} in ${secs(genMs)}): one account with ${fmtInt(scaleDevices)} devices and a menu of ${fmtInt(scaleGroups)} groups (2 levels), ${smallAccounts} small accounts with ${smallDevices} devices and 30 groups each; imported with \`npm run import\`, so the service starts with its catalog stored.`,
            `${name}: service settings: POLL_INTERVAL_MS=${scale.pollIntervalMs}, HEARTBEAT_TIMEOUT_MS=${scale.heartbeatTimeoutMs} (devices go offline when the row ages their heartbeat in the database, as a device that stops beating would), WEBHOOK_ALLOW_PRIVATE_TARGETS=true; receivers and probes on 127.0.0.1. A probe process asks /healthz and a small account's request every ${scale.probeEveryMs} ms each and scrapes /metrics every ${scale.scrapeEveryMs / 1000} s; the p99 of a scrape covers the window since the one before, so the worst scrape bounds the p99 of the whole scenario from above.`,
          ],
    };
    for (const engine of benchEngines()) {
      if (big) {
        const m = await runScale(engine, file, scratch);
        const part = linesFor(m);
        out.rows.push(...part.rows);
        out.notes.push(...part.notes);
      }
      if (manyAccounts) out.rows.push(manyAccountsLine(await runManyAccounts(engine, scratch)));
    }
    return out;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

export const scaleRow: BenchRow = {
  name,
  contractRow: 7,
  description:
    'scale: 100,000 devices and 20,000 groups in one account beside small ones → cold dropdowns, poll, 2,000 offline end to end, /healthz and small accounts meanwhile, lag, memory, fairness (slow; only when named)',
  onlyWhenNamed: true,
  budgetMs: 30 * 60_000,
  run,
};

import type { FleetUpstream } from '../../bench/lib/fleet-upstream.js';
import { analysePolls, type Gap } from '../../bench/lib/poll-gaps.js';
import { transitionKey, type LoggedEvent } from './harness.js';
import type { Arrival, SigningReceiver } from './signing-receiver.js';

/**
 * What the replica tests assert, as lists of problems (empty = pass) plus a one-line summary
 * of the figures, so a failure says everything that went wrong at once.
 */
export interface Kill {
  index: number;
  at: number;
}

/** A time span in which a crash or an outage may explain re-sending a delivered webhook-id. */
export interface Window {
  from: number;
  to: number;
}

/** Around a kill: a 2xx answered up to 2 s before it (its record may not have been written), or just after. */
export const killWindows = (kills: Kill[]): Window[] => kills.map((k) => ({ from: k.at - 2000, to: k.at + 500 }));

const sample = (items: unknown[]) => `${items.length}: ${JSON.stringify(items.slice(0, 5))}${items.length > 5 ? ' …' : ''}`;
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);

/**
 * How close two polls of one key must come to count as "polled twice in one interval", as a
 * share of the interval. A poll is one upstream call: the attempts of a call the connector
 * retried (a timeout, a 5xx) carry one X-Request-Id and are one poll (analysePolls, `callIds`).
 * Under CPU load a first attempt reached the upstream 300-700 ms late, timed out, and its retry
 * came 230-500 ms after it: counted as a second poll, that failed this check in 3 of 11 loaded
 * runs (in two of them, with each attempt tagged: 82 short gaps, 71 a retry, 11 the poll after a
 * retried one, none two replicas holding a key at once). The gap from a retried poll to the next
 * one is still checked: the next poll is due 0.95 intervals after the attempt that read the
 * source (poll-key.ts, nextPollTime), no longer after the first attempt. Not 0.9: one replica's poll request reaches the upstream some time
 * after its claim, so on a busy machine a single replica's gap fell to 897 ms of 1,000 (the
 * next poll's claim comes one interval after the previous claim, not after its request). Two
 * replicas holding one key at once poll it in the same round, milliseconds apart, far under
 * half an interval; the lease rules themselves are proven with injected clocks
 * (test/integration/replicas-shared.test.ts, "poll leases").
 */
export const doublePollShare = 0.5;

/**
 * `replicated` (several replicas sharing leases on PostgreSQL): short gaps away from kills are
 * problems, and every gap, across a kill too, must stay within interval + lease + slack (the
 * take-over). Otherwise (one process, killed and restarted, whose rounds start every interval)
 * short gaps are only counted and gaps across a kill (a process restart, no take-over) only
 * reported.
 */
export function checkPolls(input: {
  fleet: FleetUpstream;
  from: number;
  to: number;
  intervalMs: number;
  leaseMs: number;
  slackMs: number;
  kills: Kill[];
  replicated: boolean;
}) {
  const { fleet, from, to, intervalMs, leaseMs, slackMs, kills } = input;
  const analysis = analysePolls(fleet.polls, { from, to }, intervalMs, doublePollShare, fleet.pollIds);
  const takeoverMs = intervalMs + leaseMs + slackMs;
  // A gap "spans" a kill when the previous poll was before it and the next one after it.
  const spansKill = (g: Gap) => kills.some((k) => g.at - g.ms <= k.at && g.at >= k.at);
  const nearKill = (g: Gap) => kills.some((k) => g.at >= k.at && g.at <= k.at + takeoverMs);
  // Each short gap with the X-Request-Id of both polls, for a failure message.
  const withIds = (g: Gap) => {
    const i = fleet.polls[g.key]!.indexOf(g.at);
    return { ...g, ids: [fleet.pollIds[g.key]![i - 1], fleet.pollIds[g.key]![i]] };
  };
  const unexcusedShort = analysis.shortGaps.filter((g) => !nearKill(g)).map(withIds);
  const tooLong = analysis.gaps.filter((g) => g.ms > takeoverMs && (input.replicated || !spansKill(g)));
  const acrossKills = analysis.gaps.filter(spansKill);
  const otherGaps = analysis.gaps.filter((g) => !spansKill(g));
  const perInterval = sorted(analysis.keysPerInterval);
  const problems: string[] = [];
  if (analysis.keysPolled < fleet.keyCount) problems.push(`${fleet.keyCount - analysis.keysPolled} keys not polled at all in the window`);
  if (unexcusedShort.length && input.replicated)
    problems.push(`keys polled twice within ${doublePollShare} × interval, away from kills, ${sample(unexcusedShort)}`);
  if (tooLong.length) problems.push(`gaps longer than interval + lease + ${slackMs} ms slack (${takeoverMs} ms) ${sample(tooLong)}`);
  const summary =
    `${analysis.polls} polls in ${((to - from) / 1000).toFixed(1)} s; keys polled per interval min ${perInterval[0]} / median ${perInterval[perInterval.length >> 1]} / max ${perInterval.at(-1)} of ${fleet.keyCount}; ` +
    `polled twice within ${doublePollShare} × interval: ${analysis.shortGaps.length} (${analysis.shortGaps.length - unexcusedShort.length} around kills); ` +
    `upstream calls retried: ${analysis.retries}; ` +
    `longest gap ${analysis.gaps[0]?.ms ?? 0} ms; longest across a kill ${acrossKills[0]?.ms ?? 'n/a'} ms; longest elsewhere ${otherGaps[0]?.ms ?? 'n/a'} ms`;
  return { problems, summary, analysis, longestAcrossKill: acrossKills[0]?.ms ?? null };
}

export function checkDeliveries(input: { fleet: FleetUpstream; receiver: SigningReceiver; logs: Map<number, LoggedEvent[]>; excused: Window[] }) {
  const { fleet, receiver, logs, excused } = input;
  const problems: string[] = [];
  const logged = new Map<string, LoggedEvent>(); // `${key}|transition` → event
  const duplicates: string[] = [];
  for (const [key, events] of logs) {
    if (new Set(events.map((e) => e.id)).size !== events.length) duplicates.push(`key ${key}: repeated event ids`);
    for (const e of events) {
      const id = `${key}|${transitionKey(e.device.id, e.type, e.device.last_heartbeat_at)}`;
      if (logged.has(id)) duplicates.push(id);
      logged.set(id, e);
    }
  }
  const expected = new Map(fleet.transitions.map((t) => [`${t.key}|${transitionKey(t.deviceId, t.type, t.heartbeat)}`, t]));
  const missing = [...expected.keys()].filter((id) => !logged.has(id));
  const extra = [...logged.keys()].filter((id) => !expected.has(id));
  if (missing.length) problems.push(`transitions missing from GET /v1/events ${sample(missing)}`);
  if (extra.length) problems.push(`events the upstream never caused ${sample(extra)}`);
  if (duplicates.length) problems.push(`transitions logged more than once ${sample(duplicates)}`);

  const badSignatures = receiver.arrivals.filter((a) => !a.signatureOk);
  if (badSignatures.length) problems.push(`deliveries whose signature did not verify ${sample(badSignatures.map((a) => a.webhookId))}`);
  const byEvent = new Map<string, Set<string>>();
  for (const a of receiver.arrivals) byEvent.set(`${a.key}|${a.eventId}`, (byEvent.get(`${a.key}|${a.eventId}`) ?? new Set()).add(a.webhookId));
  const manyIds = [...byEvent].filter(([, ids]) => ids.size > 1).map(([id]) => id);
  if (manyIds.length) problems.push(`events delivered under more than one webhook-id ${sample(manyIds)}`);

  const okByEvent = new Map<string, Arrival>();
  for (const a of receiver.arrivals) if (a.status < 300 && !okByEvent.has(`${a.key}|${a.eventId}`)) okByEvent.set(`${a.key}|${a.eventId}`, a);
  const undelivered = [...expected.keys()].filter((id) => !(logged.has(id) && okByEvent.has(`${id.split('|')[0]}|${logged.get(id)!.id}`)));
  if (undelivered.length) problems.push(`transitions without a 2xx delivery ${sample(undelivered)}`);

  // A webhook-id sent again after a 2xx: only a crash between the 2xx and its record explains it.
  let resends = 0;
  const unexplained: string[] = [];
  for (const [webhookId, arrivals] of receiver.byWebhookId()) {
    const firstOk = arrivals.findIndex((a) => a.status < 300);
    if (firstOk < 0) continue;
    const after = arrivals.length - firstOk - 1;
    resends += after;
    const okAt = arrivals[firstOk]!.at;
    if (after > 0 && !excused.some((w) => okAt >= w.from && okAt <= w.to)) unexplained.push(webhookId);
  }
  if (unexplained.length) problems.push(`webhook-ids re-sent after a 2xx, away from any kill or outage ${sample(unexplained)}`);

  const delays = [...expected].flatMap(([id, t]) => {
    const ok = logged.has(id) ? okByEvent.get(`${t.key}|${logged.get(id)!.id}`) : undefined;
    return ok ? [ok.at - t.at] : [];
  });
  const d = sorted(delays);
  const summary =
    `${expected.size} transitions, ${logged.size} logged, ${okByEvent.size} delivered with a 2xx, ${receiver.byWebhookId().size} webhook-ids, ` +
    `${resends} re-sends after a 2xx (${unexplained.length} unexplained); change → first 2xx median ${d[d.length >> 1] ?? 'n/a'} ms, max ${d.at(-1) ?? 'n/a'} ms`;
  return { problems, summary, resends };
}

import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import { parse } from 'yaml';
import { projectRoot } from '../../src/paths.js';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { pollDue } from '../helpers/poll.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { Receiver } from '../helpers/receiver.js';
import { catalog, keys, menuIds } from '../fixtures/catalog.js';

/**
 * deploy/prometheus/alerts.yml and deploy/grafana/connector.json (docs/deploy.md, "Monitoring"):
 * the rules pass their unit tests (`promtool test rules`), and every metric that a rule or a
 * dashboard query names is one that a real app's /metrics exposes after real traffic (upstream
 * calls, a poll, a delivery), besides Prometheus' own `up`.
 */

/* eslint-disable @typescript-eslint/no-explicit-any */
type Doc = any;

const prometheusDir = join(projectRoot, 'deploy', 'prometheus');
const alerts: Doc = parse(readFileSync(join(prometheusDir, 'alerts.yml'), 'utf8'));
const dashboard: Doc = JSON.parse(readFileSync(join(projectRoot, 'deploy', 'grafana', 'connector.json'), 'utf8'));

/** Series Prometheus makes itself for every scrape target. */
const prometheusOwn = new Set(['up']);
const keywords = new Set(['and', 'or', 'unless', 'bool', 'offset', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'inf', 'nan']);

/** The metric names a PromQL expression reads: identifiers that are neither functions, keywords nor label names. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  const names = [...bare.matchAll(/(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)]
    .filter((m) => m[2] === undefined) // a function or an aggregation
    .map((m) => m[1]!)
    .filter((name) => !keywords.has(name.toLowerCase()));
  return [...new Set(names)];
}

function dashboardExpressions(panels: Doc[]): string[] {
  return panels.flatMap((panel) => [...(panel.targets ?? []).map((t: Doc) => t.expr as string), ...dashboardExpressions(panel.panels ?? [])]);
}

const ruleExpressions: string[] = alerts.groups.flatMap((group: Doc) => group.rules.map((rule: Doc) => rule.expr as string));

let exposed: Set<string>;
const cleanup: Array<() => Promise<void>> = [];

beforeAll(async () => {
  // An upstream-mode app with a hook: upstream calls, cache lookups, a poll with a transition, a delivery.
  const upClock = new ManualClock(Date.now());
  const upstream = await new FakeUpstream(catalog(), upClock).start();
  const receiver = await new Receiver().start();
  const t: TestApp = await buildTestApp({
    clock: new ManualClock(Date.now()),
    env: { DEVICE_API_URL: upstream.baseUrl, MENU_API_URL: upstream.baseUrl, WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', CONNECTOR_SECRET: 'a1'.repeat(32) },
  });
  cleanup.push(
    () => t.close(),
    () => upstream.stop(),
    () => receiver.stop(),
  );
  await request(t.app).post('/v1/hooks').set('X-API-Key', keys.ana).send({ target_url: receiver.url }).expect(201);
  await request(t.app).get(`/v1/menus/${menuIds.allDay}/groups/options`).set('X-API-Key', keys.ana).expect(200);
  await request(t.app).get(`/v1/menus/${menuIds.allDay}/groups/options`).set('X-API-Key', keys.ana).expect(200);
  await request(t.app).get('/healthz').expect(200);
  await request(t.app).get('/readyz').expect(200);
  upClock.advance(5 * 60_000);
  expect(await pollDue(t)).toMatchObject({ events: 1, failed: 0 });
  expect(await t.services.deliverer.drain()).toBe(1);
  const text = (await request(t.app).get('/metrics').expect(200)).text;
  exposed = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    exposed.add(name!);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) exposed.add(`${name}${suffix}`);
  }
  for (const [, name] of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/gm)) exposed.add(name!);
}, 60_000);

afterAll(async () => {
  for (const close of cleanup.reverse()) await close();
});

describe('metric names', () => {
  test('the extractor finds the metrics of a query and nothing else', () => {
    expect(metricNames('histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{job="x", route=~"/v1/.*"}[5m])))')).toEqual([
      'http_request_duration_seconds_bucket',
    ]);
    expect(metricNames('max by (job) (a_seconds) > 300 and max by (job) (delta(b_depth{state="pending"}[15m])) > 0')).toEqual(['a_seconds', 'b_depth']);
  });

  test('every metric an alert rule reads is exposed by /metrics (or is Prometheus’ own up)', () => {
    const named = [...new Set(ruleExpressions.flatMap(metricNames))];
    expect(named.length).toBeGreaterThanOrEqual(7);
    expect(named.filter((name) => !exposed.has(name) && !prometheusOwn.has(name))).toEqual([]);
  });

  test('every metric a dashboard query reads is exposed by /metrics (or is Prometheus’ own up)', () => {
    const expressions = dashboardExpressions(dashboard.panels);
    expect(expressions.length).toBeGreaterThanOrEqual(15);
    const named = [...new Set(expressions.flatMap(metricNames))];
    expect(named.filter((name) => !exposed.has(name) && !prometheusOwn.has(name))).toEqual([]);
    // The dashboard covers each area /metrics reports on.
    for (const family of [
      'http_requests_total',
      'upstream_requests_total',
      'cache_lookups_total',
      'poller_keys_polled_total',
      'webhook_deliveries_total',
      'webhook_queue_depth',
      'nodejs_eventloop_lag_p99_seconds',
    ]) {
      expect(named).toContain(family);
    }
  });

  test('a name /metrics does not expose is caught', () => {
    expect(exposed.has('webhook_queue_depth')).toBe(true);
    expect(exposed.has('webhook_queue_size')).toBe(false);
  });
});

describe('alert rules', () => {
  test('pass `promtool check rules` and their unit tests (`promtool test rules`); prometheus.yml passes `promtool check config`', () => {
    const check = spawnSync('promtool', ['check', 'rules', 'alerts.yml'], { cwd: prometheusDir, encoding: 'utf8', timeout: 60_000 });
    if (check.error && (check.error as NodeJS.ErrnoException).code === 'ENOENT') {
      console.warn('promtool not found on PATH: skipping `promtool test rules deploy/prometheus/alerts.test.yml` (apt-get install prometheus)');
      return;
    }
    expect(check.stdout + check.stderr).toContain('SUCCESS: 7 rules found');
    const config = spawnSync('promtool', ['check', 'config', 'prometheus.yml'], { cwd: prometheusDir, encoding: 'utf8', timeout: 60_000 });
    expect({ status: config.status, output: config.stdout + config.stderr }).toMatchObject({
      status: 0,
      output: expect.stringContaining('is valid prometheus config file syntax'),
    });
    const run = spawnSync('promtool', ['test', 'rules', 'alerts.test.yml'], { cwd: prometheusDir, encoding: 'utf8', timeout: 60_000 });
    expect({ status: run.status, output: run.stdout + run.stderr }).toMatchObject({ status: 0, output: expect.stringContaining('SUCCESS') });
  });

  test('every rule names the alert list of the docs and is tested', () => {
    const names = alerts.groups.flatMap((group: Doc) => group.rules.map((rule: Doc) => rule.alert as string));
    const tests = readFileSync(join(prometheusDir, 'alerts.test.yml'), 'utf8');
    const deployDoc = readFileSync(join(projectRoot, 'docs', 'deploy.md'), 'utf8');
    for (const name of names) {
      expect(tests).toContain(`alertname: ${name}`);
      expect(deployDoc).toContain(`\`${name}\``);
    }
  });
});

import { expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { TestApp } from '../helpers/app.js';
import { hookCalls, hookKit } from '../helpers/hook-kit.js';
import { sample, scrape } from '../helpers/metrics.js';
import { keys } from '../fixtures/catalog.js';
import { projectRoot } from '../../src/paths.js';
import { pollDue } from '../helpers/poll.js';

// docs/webhooks.md, "When something goes wrong": the rules every hook operation shares (scope,
// the operations' metrics), a held delivery's end at the retention, and a test delivery's
// answer within WEBHOOK_TIMEOUT_MS. Ana's only online device goes offline once the 5-minute
// heartbeat timeout passes.
const timeoutMs = 300_000;
const day = 86_400_000;

const { app, receiver } = hookKit(timeoutMs);
const call = hookCalls;

async function subscribe(t: TestApp, url: string): Promise<string> {
  return ((await call(t).post('/v1/hooks', { target_url: url }).expect(201)).body as { id: string }).id;
}

async function offline(t: TestApp): Promise<void> {
  t.clock.advance(timeoutMs);
  expect((await pollDue(t)).events).toBe(1);
}

const deliveries = async (t: TestApp, hookId: string) =>
  (await call(t).get(`/v1/hooks/${hookId}/deliveries`).expect(200)).body as Array<{
    delivery_id: string;
    delivery_status: string;
    outcome: string | null;
    error: string | null;
  }>;

test('every hook operation needs hooks:write: a key without it is a 403, whatever the hook', async () => {
  const t = await app();
  const r = await receiver();
  const hookId = await subscribe(t, r.url);
  await offline(t);
  const [item] = await deliveries(t, hookId);
  const scopeError = { message: 'Invalid scopes', details: [{ path: 'scope', message: 'needs hooks:write' }] };
  // Ben has device:read and menu:read only.
  const ben = hookCalls(t, keys.ben);
  await ben.patch(`/v1/hooks/${hookId}`, { enabled: false }).expect(403, scopeError);
  await ben.post(`/v1/hooks/${hookId}/test`).expect(403, scopeError);
  await ben.post(`/v1/hooks/${hookId}/secret/rotate`).expect(403, scopeError);
  await ben.get(`/v1/hooks/${hookId}/deliveries`).expect(403, scopeError);
  await ben.get(`/v1/hooks/${hookId}/deliveries/${item!.delivery_id}`).expect(403, scopeError);
  await ben.post(`/v1/hooks/${hookId}/deliveries/${item!.delivery_id}/resend`).expect(403, scopeError);
  await ben.post(`/v1/hooks/${hookId}/recover`, { since: '2000-01-01T00:00:00Z' }).expect(403, scopeError);
  // Nothing changed, nothing sent.
  expect((await call(t).get(`/v1/hooks/${hookId}`).expect(200)).body).toMatchObject({ status: 'active' });
  expect(r.received).toHaveLength(0);
});

test('a held delivery waits while its hook is disabled, then is dead with the reason when its event leaves the retention', async () => {
  const t = await app();
  const r = await receiver();
  const hookId = await subscribe(t, r.url);
  await offline(t);
  t.clock.advance(3_600_000);
  await call(t).patch(`/v1/hooks/${hookId}`, { enabled: false }).expect(200);
  expect((await deliveries(t, hookId)).map((d) => d.delivery_status)).toEqual(['held']);
  // Days go by: nothing is attempted, nothing lost.
  for (let i = 0; i < 6; i += 1) {
    t.clock.advance(day);
    expect(await t.services.deliverer.drain()).toBe(0);
    await t.services.retention.runOnce();
  }
  expect((await deliveries(t, hookId)).map((d) => d.delivery_status)).toEqual(['held']);
  // The event passes the 7-day retention (the hook, disabled an hour later, is still kept).
  t.clock.advance(day - 3_600_000 + 60_000);
  await t.services.retention.runOnce();
  expect(await deliveries(t, hookId)).toEqual([
    expect.objectContaining({ delivery_status: 'dead', outcome: 'dead', error: 'The event passed the 7-day retention before it could be delivered' }),
  ]);
  await call(t).patch(`/v1/hooks/${hookId}`, { enabled: true }).expect(200);
  expect(await t.services.deliverer.drain()).toBe(0);
  expect(r.received).toHaveLength(0);
});

test('a test delivery to a receiver that never answers answers within WEBHOOK_TIMEOUT_MS: no status code, the error', async () => {
  const t = await app({ WEBHOOK_TIMEOUT_MS: '300' });
  const r = await receiver();
  r.respondWith({ status: 200, delayMs: 10_000 });
  const hookId = await subscribe(t, r.url);
  const started = performance.now();
  const res = await call(t).post(`/v1/hooks/${hookId}/test`).expect(200);
  // A generous bound: the timeout is 300 ms, the receiver would answer after 10 s.
  expect(performance.now() - started).toBeLessThan(5_000);
  expect(res.body).toEqual({ delivered: false, status_code: null, duration_ms: expect.any(Number), error: expect.any(String) });
  expect(res.body.error).not.toBe('');
  expect((await deliveries(t, hookId)).map((d) => d.delivery_status)).toEqual(['failed']);
});

test('the operations are counted: webhook_resends_total, webhook_recovers_total{mode}, webhook_recovered_deliveries_total, webhook_tests_total{outcome}', async () => {
  const t = await app({ WEBHOOK_RETRY_SCHEDULE_MS: '1000' });
  const r = await receiver();
  const hookId = await subscribe(t, r.url);
  const since = new Date(t.clock.now()).toISOString();
  const zero = (await scrape(t.app)).samples;
  for (const [name, labels] of [
    ['webhook_resends_total', {}],
    ['webhook_recovers_total', { mode: 'run' }],
    ['webhook_recovers_total', { mode: 'dry_run' }],
    ['webhook_recovered_deliveries_total', {}],
    ['webhook_tests_total', { outcome: 'delivered' }],
    ['webhook_tests_total', { outcome: 'failed' }],
  ] as const)
    expect(zero.has(Object.keys(labels).length ? `${name}{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`)}}` : name)).toBe(true);

  // Two tests: one delivered, one failed.
  await call(t).post(`/v1/hooks/${hookId}/test`).expect(200);
  r.respondWith({ status: 500 });
  await call(t).post(`/v1/hooks/${hookId}/test`).expect(200);
  // A dead delivery, resent once (a refused resend is not counted), then dead again and recovered.
  await offline(t);
  r.respondWith({ status: 500 }, { status: 500 });
  await t.services.deliverer.drain();
  t.clock.advance(1000);
  await t.services.deliverer.drain();
  const dead = (await deliveries(t, hookId)).find((d) => d.delivery_status === 'dead')!;
  await call(t).post(`/v1/hooks/${hookId}/deliveries/dlv_999999/resend`).expect(404);
  await call(t).post(`/v1/hooks/${hookId}/deliveries/${dead.delivery_id}/resend`).expect(202);
  r.respondWith({ status: 500 }, { status: 500 });
  await t.services.deliverer.drain();
  t.clock.advance(1000);
  await t.services.deliverer.drain();
  expect((await call(t).post(`/v1/hooks/${hookId}/recover`, { since, dry_run: true }).expect(200)).body).toEqual({ count: 1 });
  expect((await call(t).post(`/v1/hooks/${hookId}/recover`, { since }).expect(202)).body).toEqual({ count: 1 });
  await t.services.hookOps.settled();
  await request(t.app).post(`/v1/hooks/${hookId}/recover`).set('X-API-Key', keys.ana).send({ since: 'yesterday' }).expect(400);

  const { samples } = await scrape(t.app);
  expect(sample(samples, 'webhook_tests_total', { outcome: 'delivered' })).toBe(1);
  expect(sample(samples, 'webhook_tests_total', { outcome: 'failed' })).toBe(1);
  expect(sample(samples, 'webhook_resends_total')).toBe(1);
  expect(sample(samples, 'webhook_recovers_total', { mode: 'dry_run' })).toBe(1);
  expect(sample(samples, 'webhook_recovers_total', { mode: 'run' })).toBe(1);
  expect(sample(samples, 'webhook_recovered_deliveries_total')).toBe(1);
});

test('every hook operation is in the OpenAPI document (hooks:write) and in docs/webhooks.md, and so are their metrics', async () => {
  const t = await app();
  const doc = (await request(t.app).get('/openapi.json').expect(200)).body as {
    paths: Record<string, Record<string, { security?: unknown; description?: string; summary?: string }>>;
  };
  const guide = readFileSync(join(projectRoot, 'docs', 'webhooks.md'), 'utf8');
  const operations: Array<[string, string]> = [
    ['patch', '/v1/hooks/{id}'],
    ['post', '/v1/hooks/{id}/test'],
    ['post', '/v1/hooks/{id}/secret/rotate'],
    ['get', '/v1/hooks/{id}/deliveries'],
    ['get', '/v1/hooks/{id}/deliveries/{delivery_id}'],
    ['post', '/v1/hooks/{id}/deliveries/{delivery_id}/resend'],
    ['post', '/v1/hooks/{id}/recover'],
  ];
  for (const [method, path] of operations) {
    const op = doc.paths[path]?.[method];
    expect({ path, method, documented: op !== undefined }).toEqual({ path, method, documented: true });
    expect(JSON.stringify(op)).toContain('hooks:write');
    expect({ path, inGuide: guide.includes(`${method.toUpperCase()} ${path}`) }).toEqual({ path, inGuide: true });
  }
  for (const name of [
    'webhook_resends_total',
    'webhook_recovers_total',
    'webhook_recovered_deliveries_total',
    'webhook_tests_total',
    'hook.disabled',
    'delivery.dead',
  ])
    expect(guide).toContain(name);
});

import { afterEach, describe, expect, test } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from '../helpers/app.js';
import { FakeUpstream } from '../helpers/fake-upstream.js';
import { sample, scrape } from '../helpers/metrics.js';
import { catalog, keys, menuIds } from '../fixtures/catalog.js';

/**
 * docs/service.md: `/metrics` scraped over HTTP after real traffic — requests, upstream calls to a
 * fake upstream on 127.0.0.1:0, poll rounds, webhook deliveries to a real local receiver.
 */

const apps: TestApp[] = [];
const stoppers: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close();
  for (const stop of stoppers.splice(0)) await stop();
});

async function app(env: Record<string, string> = {}): Promise<TestApp> {
  // Real wall-clock start: receivers check webhook-timestamp against their own clock.
  const t = await buildTestApp({ clock: new ManualClock(Date.now()), dataset: catalog(), env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...env } });
  apps.push(t);
  return t;
}

const groupOptions = '/v1/menus/:menuId/groups/options';

describe('HTTP requests', () => {
  test('are counted and timed by route pattern, method and status; unmatched paths never appear', async () => {
    const t = await app();
    await request(t.app).get(`/v1/menus/${menuIds.allDay}/groups/options`).set('X-API-Key', keys.ana).expect(200);
    await request(t.app).get(`/v1/menus/${menuIds.allDay}/groups/options`).set('X-API-Key', keys.ana).expect(200);
    await request(t.app).get(`/v1/menus/${menuIds.otherAccount}/groups/options`).set('X-API-Key', keys.ana).expect(404);
    await request(t.app).get('/devices/a4:83:e7:1f:2b:01').set('Authorization', `Bearer ${keys.ana}`).expect(200);
    await request(t.app).get(`/no/such/${keys.ben}`).expect(404);

    const { text, samples } = await scrape(t.app);
    expect(sample(samples, 'http_requests_total', { route: groupOptions, method: 'GET', status: '200' })).toBe(2);
    expect(sample(samples, 'http_requests_total', { route: groupOptions, method: 'GET', status: '404' })).toBe(1);
    expect(sample(samples, 'http_requests_total', { route: '/devices/:id', method: 'GET', status: '200' })).toBe(1);
    expect(sample(samples, 'http_requests_total', { route: '(unmatched)', method: 'GET', status: '404' })).toBe(1);
    expect(sample(samples, 'http_request_duration_seconds_count', { route: groupOptions, method: 'GET', status: '200' })).toBe(2);
    expect(sample(samples, 'http_request_duration_seconds_bucket', { route: groupOptions, method: 'GET', status: '200', le: '+Inf' })).toBe(2);
    // The option list was loaded once, then served from the cache.
    expect(sample(samples, 'cache_lookups_total', { cache: 'menu_options', result: 'miss' })).toBeGreaterThanOrEqual(1);
    expect(sample(samples, 'cache_lookups_total', { cache: 'menu_options', result: 'hit' })).toBeGreaterThanOrEqual(1);
    // Default process metrics are there too.
    expect(sample(samples, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    // No key, id or raw path in any label.
    for (const secret of [keys.ana, keys.ben, menuIds.allDay, menuIds.otherAccount, 'a4:83:e7', '/no/such']) expect(text).not.toContain(secret);

    // The scrape itself is counted on the next one.
    const again = await scrape(t.app);
    expect(sample(again.samples, 'http_requests_total', { route: '/metrics', method: 'GET', status: '200' })).toBe(1);
  });

  test('each app has its own registry: two apps count their own requests', async () => {
    const a = await app();
    const b = await app();
    await request(a.app).get('/healthz').expect(200);
    await request(a.app).get('/healthz').expect(200);
    await request(b.app).get('/healthz').expect(200);
    expect(sample((await scrape(a.app)).samples, 'http_requests_total', { route: '/healthz', method: 'GET', status: '200' })).toBe(2);
    expect(sample((await scrape(b.app)).samples, 'http_requests_total', { route: '/healthz', method: 'GET', status: '200' })).toBe(1);
  });
});

describe('upstream calls', () => {
  test('are counted per attempt by area and outcome, with latency', async () => {
    const upstream = await new FakeUpstream(catalog()).start();
    stoppers.push(() => upstream.stop());
    const t = await app({ MENU_API_URL: upstream.baseUrl, UPSTREAM_RETRIES: '1', OPTIONS_CACHE_TTL_MS: '0' });
    const options = () => request(t.app).get('/v1/menus/options').set('X-API-Key', keys.ana);

    await options().expect(200);
    upstream.failNext({ status: 503 }); // retried once, then fine
    await options().expect(200);
    upstream.failNext({ status: 200, body: 'not json' }, { status: 200, body: '{"menus": "wrong"}' });
    await options().expect(502);
    await options().expect(502);
    upstream.failNext({ status: 401, body: { message: 'Invalid API key' } });
    await options().expect(401);

    const { samples } = await scrape(t.app);
    const count = (outcome: string) => sample(samples, 'upstream_requests_total', { area: 'menu', outcome });
    expect(count('ok')).toBe(2);
    expect(count('http_5xx')).toBe(1);
    expect(count('invalid_body')).toBe(2);
    expect(count('http_4xx')).toBe(1);
    expect(sample(samples, 'upstream_request_duration_seconds_count', { area: 'menu', outcome: 'ok' })).toBe(2);
    expect(sample(samples, 'upstream_requests_total', { area: 'device', outcome: 'ok' })).toBe(0);
  });

  test('a timeout is its own outcome', async () => {
    const upstream = await new FakeUpstream(catalog()).start();
    stoppers.push(() => upstream.stop());
    const t = await app({ DEVICE_API_URL: upstream.baseUrl, UPSTREAM_RETRIES: '0', UPSTREAM_TIMEOUT_MS: '150' });
    upstream.failNext({ hang: true });
    await request(t.app).get('/devices').set('Authorization', `Bearer ${keys.ana}`).expect(504);
    const { samples } = await scrape(t.app);
    expect(sample(samples, 'upstream_requests_total', { area: 'device', outcome: 'timeout' })).toBe(1);
  });
});

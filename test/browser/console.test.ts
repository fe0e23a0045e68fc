import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { ensureBuild } from '../helpers/processes.js';
import { Receiver } from '../helpers/receiver.js';
import { axeViolations, describeViolations, openBrowser, screenshot, see, type Browser } from './browser.js';
import { adminToken, demoKey, startConnector, type LiveConnector } from './connector.js';

// The console (docs/console.md) in Debian's chromium against a live connector on the demo
// dataset: every page, clicked as a user would; axe-core on each; no CSP violation or page error.

let connector: LiveConnector;
let browser: Browser;
let page: Page;
let receiver: Receiver;

beforeAll(async () => {
  await ensureBuild();
  receiver = await new Receiver().start();
  // One retry, 200 ms after the first attempt: a receiver that fails twice makes a dead delivery.
  connector = await startConnector({ WEBHOOK_RETRY_SCHEDULE_MS: '200' });
  browser = await openBrowser();
  page = browser.page;
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await connector?.stop();
  await receiver?.stop();
});

const consoleUrl = (path = '') => `${connector.base}/console${path}`;

async function expectAccessible(name: string): Promise<void> {
  const violations = await axeViolations(page);
  expect(`${name}:\n${describeViolations(violations)}`).toBe(`${name}:\n`);
}

async function signInAs(role: 'owner' | 'operator', secret: string): Promise<void> {
  await page.goto(consoleUrl());
  await page.getByLabel(role === 'owner' ? "A key's owner (API key)" : 'Operator (ADMIN_TOKEN)').check();
  await page.getByLabel(role === 'owner' ? 'API key' : 'Admin token', { exact: true }).fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

async function apiTotal(path: string): Promise<number> {
  const res = await fetch(`${connector.base}${path}`, { headers: { Authorization: `Bearer ${demoKey}` } });
  return ((await res.json()) as { total: number }).total;
}

describe('serving', () => {
  test('the page and its assets need no key and carry a policy that allows only the connector itself', async () => {
    const res = await fetch(consoleUrl());
    expect(res.status).toBe(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const html = await res.text();
    const assets = [...html.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    expect(html).not.toMatch(/<script>(?!<\/script>)|style=|https?:\/\//);
    for (const asset of assets) {
      const a = await fetch(`${connector.base}${asset}`);
      expect(a.status).toBe(200);
      const body = await a.text();
      expect(body).not.toContain('sourceMappingURL=');
      expect((await fetch(`${connector.base}${asset}.map`)).status).toBe(404);
    }
    expect((await fetch(consoleUrl('/webhooks'))).status).toBe(200);
  });
});

describe('sign-in', () => {
  test('a wrong key is refused with the API’s message; nothing is kept', async () => {
    await signInAs('owner', 'sk_wrong_key_0000000000000000');
    await see(page.getByRole('alert'), 'Invalid API key');
    await screenshot(page, 'sign-in');
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
  });

  test('the demo key signs in to the devices page; the key is in session storage only, never in a URL or cookie', async () => {
    await signInAs('owner', demoKey);
    await page.waitForURL(consoleUrl('/devices'));
    await see(page.getByRole('heading', { name: 'Devices', level: 1 }));
    await see(page.getByText('Harbor Street Diner'));
    expect(page.url()).not.toContain(demoKey);
    expect(await browser.context.cookies()).toEqual([]);
    expect(await page.evaluate('JSON.stringify(sessionStorage)')).toContain(demoKey);
    expect(await page.evaluate('JSON.stringify(localStorage)')).not.toContain(demoKey);
    // The start banner prints the demo key on purpose; no log line does.
    const logLines = connector.output().split('\n').filter((line) => line.startsWith('{'));
    expect(logLines.filter((line) => line.includes(demoKey))).toEqual([]);
  });
});

describe('devices', () => {
  test('counts, the list with heartbeat ages, search, the status filter and the page are accessible', async () => {
    const [online, offline] = [await apiTotal('/devices?is_online=true&page_size=1'), await apiTotal('/devices?is_online=false&page_size=1')];
    await see(page.getByTestId('online-count'), String(online));
    await see(page.getByTestId('offline-count'), String(offline));
    const table = page.getByTestId('device-table');
    await see(table.locator('caption'), `${online + offline} device`);
    await see(table.locator('tbody tr'), 'Front counter');
    expect(await table.locator('tbody tr').count()).toBe(Math.min(25, online + offline));
    await see(table.locator('tbody tr').filter({ hasText: 'Dessert case' }), /days ago/);
    await see(table.locator('tbody tr').filter({ hasText: 'Catering pickup' }), 'never');

    await page.getByLabel('Search by name').fill('menu board');
    await see(table.locator('caption'), '4 matching devices');
    expect(await table.locator('tbody tr td:first-child').allInnerTexts()).toEqual(['Menu board 1', 'Menu board 2', 'Menu board 10', 'Patio menu board']);
    await page.getByLabel('Search by name').fill('');
    await page.getByLabel('Status').selectOption('offline');
    await see(table.locator('caption'), `${offline} device`);
    const statuses = await table.locator('tbody tr td:nth-child(3)').allInnerTexts();
    expect(statuses.length).toBe(Math.min(25, offline));
    expect(new Set(statuses)).toEqual(new Set(['offline']));
    await see(page.locator('.chart canvas'));
    await expectAccessible('devices page');
  });

  test('a screen that goes offline shows on the chart of transitions per hour and in the latest transitions', async () => {
    // Visiting the page read the polling trigger, which enrolled the key: its baseline is taken.
    // The demo's kitchen screen now falls silent, as a real one would: its last heartbeat 6 minutes
    // ago, so it went offline (5-minute timeout) a minute ago, inside the chart's week.
    await see(page.getByRole('img', { name: /Transitions per hour/ }));
    const db = new Database(connector.dbPath);
    const heartbeat = new Date(Date.now() - 360_000).toISOString().replace('Z', '000Z');
    db.prepare('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?').run(heartbeat, 'a4:83:e7:1f:2b:06');
    db.close();
    const deadline = Date.now() + 30_000;
    for (;;) {
      await page.getByRole('button', { name: 'Refresh chart' }).click();
      const caption = await page.locator('figure figcaption').innerText();
      if (/[1-9]\d* device\.offline/.test(caption)) break;
      if (Date.now() > deadline) throw new Error(`no device.offline on the chart within 30 s: ${caption}`);
      await page.waitForTimeout(500);
    }
    await page.locator('summary', { hasText: 'Latest transitions' }).click();
    await see(page.getByTestId('latest-transitions'), 'Kitchen ticket screen (a4:83:e7:1f:2b:06) went offline');
    await page.getByLabel('Status').selectOption('');
    await see(page.getByTestId('device-table').locator('tbody tr'), 'Front counter');
    await screenshot(page, 'devices');
  });
});

describe('dropdowns', () => {
  test('every option source of the manifest, with search, next page, the groups of the chosen menu and the [label, value] answer', async () => {
    await page.getByRole('link', { name: 'Dropdowns' }).click();
    await page.waitForURL(consoleUrl('/dropdowns'));
    const manifest = (await (await fetch(`${connector.base}/v1/manifest`)).json()) as { optionSources: Array<{ id: string; title: string }> };
    for (const source of manifest.optionSources) await see(page.getByTestId(`source-${source.id}`));
    await see(page.getByTestId('source-menu_groups'), 'Choose a Menu above first');

    const menus = page.getByTestId('source-menus');
    await see(menus.locator('option'), 'All day');
    await page.getByLabel('Search menus').fill('break');
    await see(menus.locator('p').filter({ hasText: 'The answer to' }), 'q=break');
    expect(await menus.locator('option').allInnerTexts()).toEqual(['Breakfast']);
    await page.getByLabel('Search menus').fill('');
    await see(menus.locator('option'), 'All day');
    await menus.locator('select').selectOption({ label: 'All day' });
    await see(menus.getByRole('status'), 'All day');

    const groups = page.getByTestId('source-menu_groups');
    await see(groups.locator('option'), '›');
    const answer = JSON.parse(await groups.locator('pre').innerText()) as Array<[string, string]>;
    expect(answer.length).toBeGreaterThan(0);
    expect(answer.every((tuple) => tuple.length === 2)).toBe(true);
    expect(await groups.locator('option').first().innerText()).toBe(answer[0]![0]);

    // Ana reads 22 devices; a page holds 20: "Load more" follows the Link header.
    const devices = page.getByTestId('source-devices');
    await see(devices.getByText('20 shown of 22'));
    await devices.getByRole('button', { name: 'Load more' }).click();
    await see(devices.getByText('22 shown of 22'));
    expect(await devices.getByRole('button', { name: 'Load more' }).isDisabled()).toBe(true);
    await see(devices.locator('p').filter({ hasText: 'The answer to' }), 'cursor=');
    await expectAccessible('dropdowns page');
    await screenshot(page, 'dropdowns');
  });
});

/** Sets a demo device's last heartbeat `agoMs` ago, as a screen that stopped sending would. */
function silence(deviceId: string, agoMs: number): void {
  const db = new Database(connector.dbPath);
  db.prepare('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?').run(new Date(Date.now() - agoMs).toISOString().replace('Z', '000Z'), deviceId);
  db.close();
}

/** What the API itself answers to a request: the message the console must show. */
async function apiMessage(path: string, init: RequestInit): Promise<string> {
  const res = await fetch(`${connector.base}${path}`, init);
  return ((await res.json()) as { message: string }).message;
}

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const receivedOfType = (type: string) => receiver.received.filter((r) => (JSON.parse(r.body) as { type: string }).type === type);

describe('webhooks', () => {
  test('creating a hook: a refused URL shows the API’s message; a good one shows its secret once and opens it', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL(consoleUrl('/webhooks'));
    await see(page.getByTestId('hook-table'), 'No hooks yet');
    await expectAccessible('webhooks page, empty');

    const bad = 'ftp://example.com/hooks';
    const message = await apiMessage('/v1/hooks', { method: 'POST', headers: { 'X-API-Key': demoKey, 'Content-Type': 'application/json' }, body: JSON.stringify({ target_url: bad }) });
    await page.getByLabel('Target URL').fill(bad);
    await page.getByRole('button', { name: 'Create hook' }).click();
    await see(page.getByRole('alert'), message);

    await page.getByLabel('Target URL').fill(receiver.url);
    await page.getByRole('button', { name: 'Create hook' }).click();
    await see(page.getByTestId('shown-once'), /^whsec_/);
    await see(page.getByTestId('hook-table').locator('tbody tr'), receiver.url);
    await see(page.getByTestId('hook-detail').getByRole('heading', { level: 2 }), 'active');
  });

  test('a screen going offline is delivered; a receiver failing twice makes it dead; recover shows its count, then sends it again', async () => {
    receiver.respondWith({ status: 500 }, { status: 500 });
    silence('a4:83:e7:1f:2b:01', 360_000); // Front counter
    await until('the first attempt and its retry', () => receivedOfType('device.offline').length >= 2);
    const detail = page.getByTestId('hook-detail');
    await detail.getByLabel('Status').selectOption('dead');
    await detail.getByRole('button', { name: 'Filter' }).click();
    await see(detail.getByTestId('delivery-table').locator('tbody tr'), 'dead');

    await detail.locator('summary', { hasText: 'Recover failed deliveries' }).click();
    await detail.getByRole('button', { name: 'Count deliveries to recover' }).click();
    await see(detail.getByTestId('recover-plan'), '1 delivery would be sent again');
    expect(receivedOfType('device.offline').length).toBe(2); // the count changed nothing
    await detail.getByRole('button', { name: 'Recover 1' }).click();
    await see(detail.getByRole('status'), 'Recover started: 1 deliveries queued');
    await until('the recovered delivery', () => receivedOfType('device.offline').length === 3);
    const ids = new Set(receivedOfType('device.offline').map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(1); // the same webhook-id every time
    await detail.getByLabel('Status').selectOption('delivered');
    await detail.getByRole('button', { name: 'Filter' }).click();
    await see(detail.getByTestId('delivery-table').locator('tbody tr'), 'device.offline');
    await expectAccessible('webhooks page, a hook open');
  });

  test('send test and its attempts; resend a delivery with the same webhook-id', async () => {
    const detail = page.getByTestId('hook-detail');
    await detail.getByRole('button', { name: 'Send test' }).click();
    await see(detail.getByTestId('test-outcome'), 'Test delivered: HTTP 204');
    expect(receivedOfType('webhook.test').length).toBe(1);

    await detail.getByLabel('Status').selectOption('');
    await detail.getByRole('button', { name: 'Filter' }).click();
    const row = detail.getByTestId('delivery-table').locator('tbody tr').filter({ hasText: 'webhook.test' });
    await see(row);
    await row.getByRole('button', { name: /^Attempts of delivery/ }).click();
    const webhookId = receivedOfType('webhook.test')[0]!.headers['webhook-id']!;
    await see(page.getByTestId('delivery-detail'), 'HTTP 204');
    await see(page.getByTestId('delivery-detail').locator('pre').first(), `webhook-id: ${webhookId}`);
    await expectAccessible('webhooks page, a delivery open');

    // Resend the screen's delivery (delivered by the recover): one more attempt, the same webhook-id.
    const offline = detail.getByTestId('delivery-table').locator('tbody tr').filter({ hasText: 'device.offline' });
    const before = receivedOfType('device.offline').length;
    await offline.getByRole('button', { name: /^Resend delivery/ }).click();
    await see(detail.getByRole('status'), 'one more attempt is on its way');
    await until('the resent delivery', () => receivedOfType('device.offline').length === before + 1);
    expect(new Set(receivedOfType('device.offline').map((r) => r.headers['webhook-id'])).size).toBe(1);
    await detail.getByTestId('delivery-table').scrollIntoViewIfNeeded();
    await screenshot(page, 'webhooks');
  });

  test('pause and resume, rotate the secret (shown once), delete', async () => {
    const detail = page.getByTestId('hook-detail');
    const firstSecret = await page.getByTestId('shown-once').first().innerText();
    await detail.getByRole('button', { name: 'Pause' }).click();
    await see(detail.getByRole('heading', { level: 2 }), 'disabled');
    await see(page.getByTestId('hook-table').locator('tbody tr'), 'disabled');
    await detail.getByRole('button', { name: 'Resume' }).click();
    await see(detail.getByRole('heading', { level: 2 }), 'active');

    await detail.getByRole('button', { name: 'Rotate secret' }).click();
    await see(detail.getByTestId('shown-once'), /^whsec_/);
    const rotated = await detail.getByTestId('shown-once').innerText();
    expect(rotated).not.toBe(firstSecret);

    await detail.getByRole('button', { name: 'Delete' }).click();
    await detail.getByRole('button', { name: 'Delete for good' }).click();
    await see(page.getByTestId('hook-table'), 'No hooks yet');
    const hooks = await fetch(`${connector.base}/v1/hooks`, { headers: { 'X-API-Key': demoKey } });
    expect(await hooks.json()).toEqual([]);
  });
});

describe('operator', () => {
  test('sign out clears the key; a wrong admin token shows the API’s message', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await see(page.getByRole('button', { name: 'Sign in' }));
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    const message = await apiMessage('/admin/v1/queue', { headers: { Authorization: 'Bearer wrong-admin-token-000000000000000000' } });
    await signInAs('operator', 'wrong-admin-token-000000000000000000');
    await see(page.getByRole('alert'), message);
  });

  test('queue health, accounts and keys: create (shown once), roll (shown once), revoke', async () => {
    await signInAs('operator', adminToken);
    await page.waitForURL(consoleUrl('/operator'));
    await see(page.getByTestId('watched-keys'), /^[1-9]/);
    // Everything was delivered and the hook deleted: no origin has deliveries left.
    await see(page.getByTestId('origin-table').locator('tbody tr'), 'No deliveries queued');
    await page.getByLabel('Account', { exact: true }).selectOption({ value: 'acc_harbor' });
    await see(page.getByTestId('key-table').locator('tbody tr'), 'Automation (all scopes)');
    await expectAccessible('operator page');

    await page.locator('summary', { hasText: 'Create a key' }).click();
    await page.getByLabel('User').selectOption({ value: 'usr_ana' });
    await page.getByLabel('Name', { exact: true }).fill('Console test');
    await page.getByRole('button', { name: 'Create key' }).click();
    await see(page.getByTestId('shown-once'));
    const created = await page.getByTestId('shown-once').innerText();
    expect((await fetch(`${connector.base}/v1/me`, { headers: { 'X-API-Key': created } })).status).toBe(200);
    const row = page.getByTestId('key-table').locator('tbody tr').filter({ hasText: 'Console test' });
    await see(row, 'active');

    await page.getByLabel('Grace period of a roll, in seconds').fill('0');
    await row.first().getByRole('button', { name: 'Roll key Console test' }).click();
    await see(page.getByTestId('shown-once'), /Rolled|./);
    await until('the rolled key shown', async () => (await page.getByTestId('shown-once').innerText()) !== created);
    const rolled = await page.getByTestId('shown-once').innerText();
    expect((await fetch(`${connector.base}/v1/me`, { headers: { 'X-API-Key': rolled } })).status).toBe(200);

    // The rolled key expired at once (grace 0); the new one is the active row.
    await see(row, 'expired');
    const fresh = row.filter({ hasText: 'active' });
    await fresh.getByRole('button', { name: 'Revoke key Console test' }).click();
    await fresh.getByRole('button', { name: 'Revoke key Console test for good' }).click();
    await see(row, 'revoked');
    const refused = await fetch(`${connector.base}/v1/me`, { headers: { 'X-API-Key': rolled } });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toBe('API key revoked');
    await screenshot(page, 'operator');
  });
});

afterAll(() => {
  // A CSP violation, an uncaught error or a failed load anywhere in the run fails it.
  expect(browser?.problems ?? []).toEqual([]);
});

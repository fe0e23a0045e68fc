import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { ensureBuild } from '../helpers/processes.js';
import { axeViolations, describeViolations, openBrowser, screenshot, see, type Browser } from './browser.js';
import { demoKey, startConnector, type LiveConnector } from './connector.js';

// The console (docs/console.md) in Debian's chromium against a live connector on the demo
// dataset: every page, clicked as a user would; axe-core on each; no CSP violation or page error.

let connector: LiveConnector;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  await ensureBuild();
  connector = await startConnector();
  browser = await openBrowser();
  page = browser.page;
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await connector?.stop();
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

afterAll(() => {
  // A CSP violation, an uncaught error or a failed load anywhere in the run fails it.
  expect(browser?.problems ?? []).toEqual([]);
});

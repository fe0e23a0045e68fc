import { describe, expect, test } from '@jest/globals';
import Database from 'better-sqlite3';
import { screenshot, see } from './browser.js';
import { demoKey } from './connector.js';
import { consoleSession, consoleUrl, expectAccessible, signInAs } from './session.js';

// The console (docs/console.md) in Debian's chromium against a live connector on the demo
// dataset, clicked as a user would: serving, sign-in, the devices and dropdowns pages.
// axe-core on each page; no CSP violation or page error (session.ts).

const s = consoleSession();

async function apiTotal(path: string): Promise<number> {
  const res = await fetch(`${s.connector.base}${path}`, { headers: { Authorization: `Bearer ${demoKey}` } });
  return ((await res.json()) as { total: number }).total;
}

describe('serving', () => {
  test('the page and its assets need no key and carry a policy that allows only the connector itself', async () => {
    const res = await fetch(consoleUrl(s));
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
      const a = await fetch(`${s.connector.base}${asset}`);
      expect(a.status).toBe(200);
      const body = await a.text();
      expect(body).not.toContain('sourceMappingURL=');
      expect((await fetch(`${s.connector.base}${asset}.map`)).status).toBe(404);
    }
    expect((await fetch(consoleUrl(s, '/webhooks'))).status).toBe(200);
  });
});

describe('sign-in', () => {
  test('a wrong key is refused with the API’s message; nothing is kept', async () => {
    await signInAs(s, 'owner', 'sk_wrong_key_0000000000000000');
    await see(s.page.getByRole('alert'), 'Invalid API key');
    await screenshot(s.page, 'sign-in');
    expect(await s.page.evaluate('sessionStorage.length')).toBe(0);
  });

  test('the demo key signs in to the devices page; the key is in session storage only, never in a URL or cookie', async () => {
    await signInAs(s, 'owner', demoKey);
    await s.page.waitForURL(consoleUrl(s, '/devices'));
    await see(s.page.getByRole('heading', { name: 'Devices', level: 1 }));
    await see(s.page.getByText('Harbor Street Diner'));
    expect(s.page.url()).not.toContain(demoKey);
    expect(await s.browser.context.cookies()).toEqual([]);
    expect(await s.page.evaluate('JSON.stringify(sessionStorage)')).toContain(demoKey);
    expect(await s.page.evaluate('JSON.stringify(localStorage)')).not.toContain(demoKey);
    // The start banner prints the demo key on purpose; no log line does.
    const logLines = s.connector
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    expect(logLines.filter((line) => line.includes(demoKey))).toEqual([]);
  });
});

describe('devices', () => {
  test('counts, the list with heartbeat ages, search, the status filter and the page are accessible', async () => {
    const [online, offline] = [await apiTotal('/devices?is_online=true&page_size=1'), await apiTotal('/devices?is_online=false&page_size=1')];
    await see(s.page.getByTestId('online-count'), String(online));
    await see(s.page.getByTestId('offline-count'), String(offline));
    const table = s.page.getByTestId('device-table');
    await see(table.locator('caption'), `${online + offline} device`);
    await see(table.locator('tbody tr'), 'Front counter');
    expect(await table.locator('tbody tr').count()).toBe(Math.min(25, online + offline));
    await see(table.locator('tbody tr').filter({ hasText: 'Dessert case' }), /days ago/);
    await see(table.locator('tbody tr').filter({ hasText: 'Catering pickup' }), 'never');

    await s.page.getByLabel('Search by name').fill('menu board');
    await see(table.locator('caption'), '4 matching devices');
    expect(await table.locator('tbody tr td:first-child').allInnerTexts()).toEqual(['Menu board 1', 'Menu board 2', 'Menu board 10', 'Patio menu board']);
    await s.page.getByLabel('Search by name').fill('');
    await s.page.getByLabel('Status').selectOption('offline');
    await see(table.locator('caption'), `${offline} device`);
    const statuses = await table.locator('tbody tr td:nth-child(3)').allInnerTexts();
    expect(statuses.length).toBe(Math.min(25, offline));
    expect(new Set(statuses)).toEqual(new Set(['offline']));
    await see(s.page.locator('.chart canvas'));
    await expectAccessible(s, 'devices page');
  });

  test('a screen that goes offline shows on the chart of transitions per hour and in the latest transitions', async () => {
    // Visiting the page read the polling trigger, which enrolled the key: its baseline is taken.
    // The demo's kitchen screen now falls silent, as a real one would: its last heartbeat 6 minutes
    // ago, so it went offline (5-minute timeout) a minute ago, inside the chart's week.
    await see(s.page.getByRole('img', { name: /Transitions per hour/ }));
    const db = new Database(s.connector.dbPath);
    const heartbeat = new Date(Date.now() - 360_000).toISOString().replace('Z', '000Z');
    db.prepare('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?').run(heartbeat, 'a4:83:e7:1f:2b:06');
    db.close();
    const deadline = Date.now() + 30_000;
    for (;;) {
      await s.page.getByRole('button', { name: 'Refresh chart' }).click();
      const caption = await s.page.locator('figure figcaption').innerText();
      if (/[1-9]\d* device\.offline/.test(caption)) break;
      if (Date.now() > deadline) throw new Error(`no device.offline on the chart within 30 s: ${caption}`);
      await s.page.waitForTimeout(500);
    }
    await s.page.locator('summary', { hasText: 'Latest transitions' }).click();
    await see(s.page.getByTestId('latest-transitions'), 'Kitchen ticket screen (a4:83:e7:1f:2b:06) went offline');
    await s.page.getByLabel('Status').selectOption('');
    await see(s.page.getByTestId('device-table').locator('tbody tr'), 'Front counter');
    await screenshot(s.page, 'devices');
  });
});

describe('dropdowns', () => {
  test('every option source of the manifest, with search, next page, the groups of the chosen menu and the [label, value] answer', async () => {
    await s.page.getByRole('link', { name: 'Dropdowns' }).click();
    await s.page.waitForURL(consoleUrl(s, '/dropdowns'));
    const manifest = (await (await fetch(`${s.connector.base}/v1/manifest`)).json()) as { optionSources: Array<{ id: string; title: string }> };
    for (const source of manifest.optionSources) await see(s.page.getByTestId(`source-${source.id}`));
    await see(s.page.getByTestId('source-menu_groups'), 'Choose a Menu above first');

    const menus = s.page.getByTestId('source-menus');
    await see(menus.locator('option'), 'All day');
    await s.page.getByLabel('Search menus').fill('break');
    await see(menus.locator('p').filter({ hasText: 'The answer to' }), 'q=break');
    expect(await menus.locator('option').allInnerTexts()).toEqual(['Breakfast']);
    await s.page.getByLabel('Search menus').fill('');
    await see(menus.locator('option'), 'All day');
    await menus.locator('select').selectOption({ label: 'All day' });
    await see(menus.getByRole('status'), 'All day');

    const groups = s.page.getByTestId('source-menu_groups');
    await see(groups.locator('option'), '›');
    const answer = JSON.parse(await groups.locator('pre').innerText()) as Array<[string, string]>;
    expect(answer.length).toBeGreaterThan(0);
    expect(answer.every((tuple) => tuple.length === 2)).toBe(true);
    expect(await groups.locator('option').first().innerText()).toBe(answer[0]![0]);

    // Ana reads 22 devices; a page holds 20: "Load more" follows the Link header.
    const devices = s.page.getByTestId('source-devices');
    await see(devices.getByText('20 shown of 22'));
    await devices.getByRole('button', { name: 'Load more' }).click();
    await see(devices.getByText('22 shown of 22'));
    expect(await devices.getByRole('button', { name: 'Load more' }).isDisabled()).toBe(true);
    await see(devices.locator('p').filter({ hasText: 'The answer to' }), 'cursor=');
    await expectAccessible(s, 'dropdowns page');
    await screenshot(s.page, 'dropdowns');
  });
});

import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page, Response } from 'playwright-core';
import { bigKeys, scaleDevices, writeScaleDataset } from '../../bench/lib/scale-dataset.js';
import { ensureBuild } from '../helpers/processes.js';
import { openBrowser, see, type Browser } from './browser.js';
import { importInto, startConnector, type LiveConnector } from './connector.js';

// docs/console.md "Scale": an account of 100,000 devices (and a menu of 20,000 groups), the
// dataset of the bench's scale row. Every owner page paints within 1 s of the navigation and
// shows its first page of data soon after; no answer the browser receives is a whole list.

/** The browser's first contentful paint of every page. */
const firstPaintBoundMs = 1000;
/**
 * A page's content (its first page of data) after navigation: measured 0.15 to 0.85 s here on 2
 * cores shared with other work (docs/console.md); bounded at twice the target so that a busy
 * machine does not fail the run, while a page that loaded a whole list (seconds) still does.
 */
const contentBoundMs = 2000;
/** The biggest API answer a page may fetch: a page of 25 devices is about 15 KB, the week's chart 20 KB. */
const answerBoundBytes = 64 * 1024;

let connector: LiveConnector;
let browser: Browser;
let page: Page;
const answers: Array<{ url: string; bytes: number; ms: number }> = [];
const measured: Record<string, { firstContentfulPaintMs: number; contentMs: number }> = {};

beforeAll(async () => {
  await ensureBuild();
  const dir = mkdtempSync(join(tmpdir(), 'console-scale-'));
  writeScaleDataset(join(dir, 'scale.json'));
  await importInto(dir, join(dir, 'scale.json'));
  // Heartbeats stay as imported (30 s old) for the whole run: a 1-hour timeout keeps them online.
  connector = await startConnector({ HEARTBEAT_TIMEOUT_MS: '3600000', POLL_INTERVAL_MS: '10000' }, 120_000, dir);
  browser = await openBrowser();
  page = browser.page;
  page.on('response', (response: Response) => {
    const url = new URL(response.url());
    if (url.pathname.startsWith('/console')) return;
    void response.body().then(
      (body) => answers.push({ url: url.pathname + url.search, bytes: body.length, ms: Math.round(response.request().timing().responseEnd) }),
      () => undefined,
    );
  });
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await connector?.stop();
  console.log(
    `console at ${scaleDevices.toLocaleString('en')} devices: ${JSON.stringify(measured)}; largest answer ${Math.max(0, ...answers.map((a) => a.bytes))} bytes over ${answers.length} requests`,
  );
  console.log(answers.map((a) => `${a.ms} ms ${a.bytes} B ${a.url}`).join('\n'));
});

/** Runs `go`, then waits for `ready`: the time until it shows, and the browser's first contentful paint. */
async function measure(name: string, go: () => Promise<void>, ready: () => Promise<void>): Promise<void> {
  const started = Date.now();
  await go();
  await ready();
  const contentMs = Date.now() - started;
  const firstContentfulPaintMs = (await page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1")) as number;
  measured[name] = { firstContentfulPaintMs: Math.round(firstContentfulPaintMs), contentMs };
}

/** The page's content: the first page of the list and the count of all devices. */
const devicesShown = async () => {
  await see(page.getByTestId('device-table').locator('tbody tr'), 'Store 1 ');
  await see(page.getByTestId('all-count'), '100,000');
};

describe(`an account of ${scaleDevices.toLocaleString('en')} devices`, () => {
  test('devices: painted within 1 s, counts and the first page of the list soon after, on signing in and on opening the page again', async () => {
    await page.goto(`${connector.base}/console`);
    await page.getByLabel("A key's owner (API key)").check();
    await page.getByLabel('API key', { exact: true }).fill(bigKeys.main);
    // The first visit: the key's baseline (100,000 devices) is recorded after the content shows.
    await measure('devices, signing in', () => page.getByRole('button', { name: 'Sign in' }).click(), devicesShown);
    // Cold: the service has just started and read nothing yet; measured 0.94 s here.
    expect(measured['devices, signing in']!.contentMs).toBeLessThan(contentBoundMs);
    await page.locator('summary', { hasText: 'Latest transitions' }).click();
    await see(page.getByTestId('no-transitions'), undefined, 60_000);

    await measure('devices', () => page.goto(`${connector.base}/console/devices`).then(() => undefined), devicesShown);
    // The online count follows the list (it reads all 100,000 heartbeats).
    const countsFrom = Date.now();
    await see(page.getByTestId('online-count'), '100,000');
    measured['devices, online count after the list'] = { firstContentfulPaintMs: -1, contentMs: Date.now() - countsFrom };
    expect(measured.devices!.firstContentfulPaintMs).toBeGreaterThan(0);
    expect(measured.devices!.firstContentfulPaintMs).toBeLessThan(firstPaintBoundMs);
    expect(measured.devices!.contentMs).toBeLessThan(contentBoundMs);
    await see(page.getByTestId('device-table').locator('caption'), 'page 1 of 4,000');
    await page.getByRole('button', { name: 'Next page' }).click();
    await see(page.getByTestId('device-table').locator('caption'), 'page 2 of 4,000');
    await page.getByLabel('Search by name').fill('store 4217');
    await see(page.getByTestId('device-table').locator('caption'), '5 matching devices');
    await see(page.locator('.chart canvas'));
  });

  test('dropdowns: the first page of every source, the 20,000 groups a page at a time', async () => {
    await measure(
      'dropdowns',
      () => page.goto(`${connector.base}/console/dropdowns`).then(() => undefined),
      async () => {
        await see(page.getByTestId('source-menus').locator('option'), 'All stores');
        await see(page.getByTestId('source-devices').locator('option'), 'Store');
      },
    );
    expect(measured.dropdowns!.firstContentfulPaintMs).toBeLessThan(firstPaintBoundMs);
    expect(measured.dropdowns!.contentMs).toBeLessThan(contentBoundMs);
    await page.getByTestId('source-menus').locator('select').selectOption({ label: 'All stores' });
    const groups = page.getByTestId('source-menu_groups');
    await see(groups.getByText('20 shown of 20,000'));
    await groups.getByRole('button', { name: 'Load more' }).click();
    await see(groups.getByText('40 shown of 20,000'));
  });

  test('webhooks: the hook list', async () => {
    await measure(
      'webhooks',
      () => page.goto(`${connector.base}/console/webhooks`).then(() => undefined),
      () => see(page.getByTestId('hook-table').locator('caption'), 'in all'),
    );
    expect(measured.webhooks!.firstContentfulPaintMs).toBeLessThan(firstPaintBoundMs);
    expect(measured.webhooks!.contentMs).toBeLessThan(contentBoundMs);
  });

  test('no answer the browser received was a whole list', () => {
    expect(answers.length).toBeGreaterThan(10);
    const big = answers.filter((a) => a.bytes > answerBoundBytes);
    expect(big).toEqual([]);
  });
});

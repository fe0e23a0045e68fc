import { beforeAll, describe, expect, test } from '@jest/globals';
import { screenshot, see } from './browser.js';
import { demoKey } from './connector.js';
import { apiMessage, consoleSession, consoleUrl, expectAccessible, signInAs, silence, until } from './session.js';

// The console's webhooks page (docs/console.md) against a live connector and a local receiver:
// every action of a hook, each checked at the receiver and in the API.

const s = consoleSession();

beforeAll(async () => {
  await signInAs(s, 'owner', demoKey);
  await s.page.waitForURL(consoleUrl(s, '/devices'));
});

const receivedOfType = (type: string) => s.receiver.received.filter((r) => (JSON.parse(r.body) as { type: string }).type === type);

describe('webhooks', () => {
  test('creating a hook: a refused URL shows the API’s message; a good one shows its secret once and opens it', async () => {
    await s.page.getByRole('link', { name: 'Webhooks' }).click();
    await s.page.waitForURL(consoleUrl(s, '/webhooks'));
    await see(s.page.getByTestId('hook-table'), 'No hooks yet');
    await expectAccessible(s, 'webhooks page, empty');

    const bad = 'ftp://example.com/hooks';
    const message = await apiMessage(s, '/v1/hooks', {
      method: 'POST',
      headers: { 'X-API-Key': demoKey, 'Content-Type': 'application/json' },
      body: JSON.stringify({ target_url: bad }),
    });
    await s.page.getByLabel('Target URL').fill(bad);
    await s.page.getByRole('button', { name: 'Create hook' }).click();
    await see(s.page.getByRole('alert'), message);

    await s.page.getByLabel('Target URL').fill(s.receiver.url);
    await s.page.getByRole('button', { name: 'Create hook' }).click();
    await see(s.page.getByTestId('shown-once'), /^whsec_/);
    await see(s.page.getByTestId('hook-table').locator('tbody tr'), s.receiver.url);
    await see(s.page.getByTestId('hook-detail').getByRole('heading', { level: 2 }), 'active');
  });

  test('a screen going offline is delivered; a receiver failing twice makes it dead; recover shows its count, then sends it again', async () => {
    s.receiver.respondWith({ status: 500 }, { status: 500 });
    silence(s, 'a4:83:e7:1f:2b:01', 360_000); // Front counter
    await until('the first attempt and its retry', () => receivedOfType('device.offline').length >= 2);
    const detail = s.page.getByTestId('hook-detail');
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
    await expectAccessible(s, 'webhooks page, a hook open');
  });

  test('send test and its attempts; resend a delivery with the same webhook-id', async () => {
    const detail = s.page.getByTestId('hook-detail');
    await detail.getByRole('button', { name: 'Send test' }).click();
    await see(detail.getByTestId('test-outcome'), 'Test delivered: HTTP 204');
    expect(receivedOfType('webhook.test').length).toBe(1);

    await detail.getByLabel('Status').selectOption('');
    await detail.getByRole('button', { name: 'Filter' }).click();
    const row = detail.getByTestId('delivery-table').locator('tbody tr').filter({ hasText: 'webhook.test' });
    await see(row);
    await row.getByRole('button', { name: /^Attempts of delivery/ }).click();
    const webhookId = receivedOfType('webhook.test')[0]!.headers['webhook-id']!;
    await see(s.page.getByTestId('delivery-detail'), 'HTTP 204');
    await see(s.page.getByTestId('delivery-detail').locator('pre').first(), `webhook-id: ${webhookId}`);
    await expectAccessible(s, 'webhooks page, a delivery open');

    // Resend the screen's delivery (delivered by the recover): one more attempt, the same webhook-id.
    const offline = detail.getByTestId('delivery-table').locator('tbody tr').filter({ hasText: 'device.offline' });
    const before = receivedOfType('device.offline').length;
    await offline.getByRole('button', { name: /^Resend delivery/ }).click();
    await see(detail.getByRole('status'), 'one more attempt is on its way');
    await until('the resent delivery', () => receivedOfType('device.offline').length === before + 1);
    expect(new Set(receivedOfType('device.offline').map((r) => r.headers['webhook-id'])).size).toBe(1);
    await s.page.locator('summary', { hasText: 'Create a hook' }).click(); // folded, so the deliveries fit the picture
    await screenshot(s.page, 'webhooks');
  });

  test('pause and resume, rotate the secret (shown once), delete', async () => {
    const detail = s.page.getByTestId('hook-detail');
    const firstSecret = await s.page.getByTestId('shown-once').first().innerText();
    await detail.getByRole('button', { name: 'Pause' }).click();
    await see(detail.getByRole('heading', { level: 2 }), 'disabled');
    await see(s.page.getByTestId('hook-table').locator('tbody tr'), 'disabled');
    await detail.getByRole('button', { name: 'Resume' }).click();
    await see(detail.getByRole('heading', { level: 2 }), 'active');

    await detail.getByRole('button', { name: 'Rotate secret' }).click();
    await see(detail.getByTestId('shown-once'), /^whsec_/);
    const rotated = await detail.getByTestId('shown-once').innerText();
    expect(rotated).not.toBe(firstSecret);

    await detail.getByRole('button', { name: 'Delete' }).click();
    await detail.getByRole('button', { name: 'Delete for good' }).click();
    await see(s.page.getByTestId('hook-table'), 'No hooks yet');
    const hooks = await fetch(`${s.connector.base}/v1/hooks`, { headers: { 'X-API-Key': demoKey } });
    expect(await hooks.json()).toEqual([]);
  });
});

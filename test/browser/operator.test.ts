import { beforeAll, describe, expect, test } from '@jest/globals';
import { screenshot, see } from './browser.js';
import { adminToken, demoKey } from './connector.js';
import { apiMessage, consoleSession, consoleUrl, expectAccessible, signInAs, until } from './session.js';

// The console's operator view (docs/console.md), signed in with ADMIN_TOKEN: queue and poller
// health, accounts and keys.

const s = consoleSession();

// The demo key's owner visits the devices page first: that enrols the key with the poller, so
// the operator sees a watched key.
beforeAll(async () => {
  await signInAs(s, 'owner', demoKey);
  await s.page.waitForURL(consoleUrl(s, '/devices'));
  await s.page.locator('summary', { hasText: 'Latest transitions' }).click();
  await see(s.page.getByTestId('no-transitions'));
});

describe('operator', () => {
  test('sign out clears the key; a wrong admin token shows the API’s message', async () => {
    await s.page.getByRole('button', { name: 'Sign out' }).click();
    await see(s.page.getByRole('button', { name: 'Sign in' }));
    expect(await s.page.evaluate('sessionStorage.length')).toBe(0);
    const message = await apiMessage(s, '/admin/v1/queue', { headers: { Authorization: 'Bearer wrong-admin-token-000000000000000000' } });
    await signInAs(s, 'operator', 'wrong-admin-token-000000000000000000');
    await see(s.page.getByRole('alert'), message);
  });

  test('queue health, accounts and keys: create (shown once), roll (shown once), revoke', async () => {
    await signInAs(s, 'operator', adminToken);
    await s.page.waitForURL(consoleUrl(s, '/operator'));
    await see(s.page.getByTestId('watched-keys'), /^[1-9]/);
    // Everything was delivered and the hook deleted: no origin has deliveries left.
    await see(s.page.getByTestId('origin-table').locator('tbody tr'), 'No deliveries queued');
    await s.page.getByLabel('Account', { exact: true }).selectOption({ value: 'acc_harbor' });
    await see(s.page.getByTestId('key-table').locator('tbody tr'), 'Automation (all scopes)');
    await expectAccessible(s, 'operator page');

    await s.page.locator('summary', { hasText: 'Create a key' }).click();
    await s.page.getByLabel('User').selectOption({ value: 'usr_ana' });
    await s.page.getByLabel('Name', { exact: true }).fill('Console test');
    await s.page.getByRole('button', { name: 'Create key' }).click();
    await see(s.page.getByTestId('shown-once'));
    const created = await s.page.getByTestId('shown-once').innerText();
    expect((await fetch(`${s.connector.base}/v1/me`, { headers: { 'X-API-Key': created } })).status).toBe(200);
    const row = s.page.getByTestId('key-table').locator('tbody tr').filter({ hasText: 'Console test' });
    await see(row, 'active');

    await s.page.getByLabel('Grace period of a roll, in seconds').fill('0');
    await row.first().getByRole('button', { name: 'Roll key Console test' }).click();
    await see(s.page.getByTestId('shown-once'), /Rolled|./);
    await until('the rolled key shown', async () => (await s.page.getByTestId('shown-once').innerText()) !== created);
    const rolled = await s.page.getByTestId('shown-once').innerText();
    expect((await fetch(`${s.connector.base}/v1/me`, { headers: { 'X-API-Key': rolled } })).status).toBe(200);

    // The rolled key expired at once (grace 0); the new one is the active row.
    await see(row, 'expired');
    const fresh = row.filter({ hasText: 'active' });
    await fresh.getByRole('button', { name: 'Revoke key Console test' }).click();
    await fresh.getByRole('button', { name: 'Revoke key Console test for good' }).click();
    await see(row, 'revoked');
    const refused = await fetch(`${s.connector.base}/v1/me`, { headers: { 'X-API-Key': rolled } });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toBe('API key revoked');
    await screenshot(s.page, 'operator');
  });
});

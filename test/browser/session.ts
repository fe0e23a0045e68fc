import { afterAll, beforeAll, expect } from '@jest/globals';
import Database from 'better-sqlite3';
import type { Page } from 'playwright-core';
import { ensureBuild } from '../helpers/processes.js';
import { Receiver } from '../helpers/receiver.js';
import { axeViolations, describeViolations, openBrowser, type Browser } from './browser.js';
import { startConnector, type LiveConnector } from './connector.js';

/** What a browser test file works with: a live connector on the demo dataset, a receiver, a page. */
export interface ConsoleSession {
  connector: LiveConnector;
  receiver: Receiver;
  browser: Browser;
  page: Page;
}

/**
 * Registers the file's set-up: the build, a receiver, a connector (one webhook retry 200 ms after
 * the first attempt: a receiver that fails twice makes a dead delivery) and a browser. At the end,
 * a CSP violation, an uncaught error or a failed load anywhere in the file fails it.
 */
export function consoleSession(): ConsoleSession {
  const s = {} as ConsoleSession;
  beforeAll(async () => {
    await ensureBuild();
    s.receiver = await new Receiver().start();
    s.connector = await startConnector({ WEBHOOK_RETRY_SCHEDULE_MS: '200' });
    s.browser = await openBrowser();
    s.page = s.browser.page;
  }, 300_000);
  afterAll(async () => {
    const problems = s.browser?.problems ?? [];
    await s.browser?.close();
    await s.connector?.stop();
    await s.receiver?.stop();
    expect(problems).toEqual([]);
  });
  return s;
}

export const consoleUrl = (s: ConsoleSession, path = '') => `${s.connector.base}/console${path}`;

/** axe-core on the page as it is: no serious or critical violation. */
export async function expectAccessible(s: ConsoleSession, name: string): Promise<void> {
  const violations = await axeViolations(s.page);
  expect(`${name}:\n${describeViolations(violations)}`).toBe(`${name}:\n`);
}

export async function signInAs(s: ConsoleSession, role: 'owner' | 'operator', secret: string): Promise<void> {
  await s.page.goto(consoleUrl(s));
  await s.page.getByLabel(role === 'owner' ? "A key's owner (API key)" : 'Operator (ADMIN_TOKEN)').check();
  await s.page.getByLabel(role === 'owner' ? 'API key' : 'Admin token', { exact: true }).fill(secret);
  await s.page.getByRole('button', { name: 'Sign in' }).click();
}

/** Sets a demo device's last heartbeat `agoMs` ago, as a screen that stopped sending would. */
export function silence(s: ConsoleSession, deviceId: string, agoMs: number): void {
  const db = new Database(s.connector.dbPath);
  db.prepare('UPDATE devices SET last_heartbeat_at = ? WHERE id = ?').run(new Date(Date.now() - agoMs).toISOString().replace('Z', '000Z'), deviceId);
  db.close();
}

/** What the API itself answers to a request: the message the console must show. */
export async function apiMessage(s: ConsoleSession, path: string, init: RequestInit): Promise<string> {
  const res = await fetch(`${s.connector.base}${path}`, init);
  return ((await res.json()) as { message: string }).message;
}

export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Locator, type Page } from 'playwright-core';

/** Debian's chromium (CI installs it with apt: .ci/run). */
export const chromiumPath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const axeSource = (createRequire(import.meta.url)('axe-core') as { source: string }).source;

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Content-Security-Policy violations, uncaught page errors and failed script/style loads seen so far. */
  problems: string[];
  close(): Promise<void>;
}

/** A headless Chromium with a fresh profile, and one page whose problems are collected. */
export async function openBrowser(): Promise<Browser> {
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} is missing: apt-get install chromium (see .ci/run)`);
  const profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    viewport: { width: 1280, height: 900 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !/Failed to load resource: the server responded with a status of 4\d\d/.test(message.text()))
      problems.push(`console: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  return {
    context,
    page,
    problems,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: string[] }>;
}

/**
 * axe-core's serious and critical violations on the page as it is now. Its source is evaluated
 * through the DevTools protocol, which the page's Content-Security-Policy does not govern, so
 * the policy under test stays as strict as it is served.
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(axeSource);
  // A string, run in the page: the test's own TypeScript knows no DOM.
  const violations = (await page.evaluate("axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)")) as AxeViolation[];
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** One line per violation, for a failure message that says what to fix. */
export function describeViolations(violations: AxeViolation[]): string {
  return violations
    .map(
      (v) =>
        `${v.impact} ${v.id}: ${v.help} at ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(', ')}`,
    )
    .join('\n');
}

/** Waits until the locator shows (with `text`, when given): the assertion fails by timing out, naming what was awaited. */
export async function see(locator: Locator, text?: string | RegExp, timeout = 15_000): Promise<void> {
  const target = text === undefined ? locator.first() : locator.filter({ hasText: text }).first();
  try {
    await target.waitFor({ state: 'visible', timeout });
  } catch {
    const shown = await locator.allInnerTexts().catch(() => []);
    throw new Error(
      `not shown within ${timeout} ms: ${String(locator)}${text === undefined ? '' : ` with ${String(text)}`}; shown: ${JSON.stringify(shown).slice(0, 800)}`,
    );
  }
}

/**
 * With CONSOLE_SCREENSHOTS=<folder> (`npm run console:screenshots`), the page as it is now as
 * `<folder>/<name>.png`, for docs/console.md. Otherwise nothing.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const folder = process.env.CONSOLE_SCREENSHOTS;
  if (!folder) return;
  // The top of the page, at most 1,300 pixels of it: the PNGs stay around 100 KB.
  const height = Math.min(1300, (await page.evaluate('document.documentElement.scrollHeight')) as number);
  await page.screenshot({
    path: join(folder, `${name}.png`),
    fullPage: true,
    clip: { x: 0, y: 0, width: 1280, height },
    animations: 'disabled',
    caret: 'hide',
  });
}

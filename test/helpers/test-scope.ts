/**
 * Test apps opened inside a test (or its beforeEach) are closed before the next test starts,
 * so a file that builds an app per test holds one test's connections at a time, not the whole
 * file's: on PostgreSQL each app is a pool, and the server's connection limit is shared by
 * every worker. Apps opened in beforeAll live until the file ends, as their file expects.
 * test/setup-apps.ts runs `startTest` before each test (before the file's own beforeEach), `endTest`
 * after it, and `closeFinishedTests` once more after the file.
 */
const openedInTests = new Set<{ close(): Promise<void> }>();
let inTest = false;

export function closeWhenTestEnds(resource: { close(): Promise<void> }): void {
  if (inTest) openedInTests.add(resource);
}

export async function startTest(): Promise<void> {
  await closeFinishedTests();
  inTest = true;
}

export function endTest(): void {
  inTest = false;
}

export async function closeFinishedTests(): Promise<void> {
  const resources = [...openedInTests];
  openedInTests.clear();
  for (const resource of resources) await resource.close();
}

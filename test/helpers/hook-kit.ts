import { afterEach } from '@jest/globals';
import request from 'supertest';
import { buildTestApp, ManualClock, type TestApp } from './app.js';
import { Receiver } from './receiver.js';
import { catalog, keys } from '../fixtures/catalog.js';

/**
 * What the hook-operation suites share: an app on the test catalog (its clock `clockLagMs`
 * behind now, private targets allowed), a signing receiver, each closed after its test, and
 * the key's requests.
 */
export function hookKit(clockLagMs: number) {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** `logLines` collects the app's log lines (at `env.LOG_LEVEL`). */
  async function app(env: Record<string, string> = {}, logLines?: string[]): Promise<TestApp> {
    const t = await buildTestApp({
      clock: new ManualClock(Date.now() - clockLagMs),
      dataset: catalog(),
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', ...env },
      logLines,
    });
    cleanups.push(() => t.close());
    return t;
  }

  /** A receiver listening at `path` (`/hook` unless told). */
  async function receiver(path?: string): Promise<Receiver> {
    const r = await new Receiver().start(path);
    cleanups.push(() => r.stop());
    return r;
  }

  return { app, receiver, cleanups };
}

/** The key's requests to an app (X-API-Key). */
export const hookCalls = (t: TestApp, key = keys.ana) => ({
  post: (path: string, body?: unknown) => {
    const req = request(t.app).post(path).set('X-API-Key', key);
    return body === undefined ? req : req.send(body as object);
  },
  patch: (path: string, body: unknown) =>
    request(t.app)
      .patch(path)
      .set('X-API-Key', key)
      .send(body as object),
  get: (path: string) => request(t.app).get(path).set('X-API-Key', key),
});

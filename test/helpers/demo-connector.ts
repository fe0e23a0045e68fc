import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { demoDatasetPath } from '../../src/paths.js';
import { buildTestApp, ManualClock, type TestApp } from './app.js';

export interface ListeningConnector {
  t: TestApp;
  /** `http://127.0.0.1:<port>`: what an exported app is pointed at. */
  base: string;
  close(): Promise<void>;
}

/**
 * The connector over the demo dataset, listening on 127.0.0.1 and a free port, for the tests
 * that run an exported app's code against it. The clock starts at the wall clock: deliveries
 * carry a webhook-timestamp that receivers check against their own.
 */
export async function listenDemoConnector(env: Record<string, string> = {}): Promise<ListeningConnector> {
  const dataset = JSON.parse(readFileSync(demoDatasetPath, 'utf8'));
  const t = await buildTestApp({ dataset, clock: new ManualClock(Date.now()), env });
  const server = t.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  return {
    t,
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await t.close();
    },
  };
}

import express from 'express';
import { serveChild } from '../lib/child.js';
import { benchDataset } from '../lib/dataset.js';
import { BenchLog, buildStack, closeServer, listenLoopback } from '../lib/stack.js';

/**
 * Child process of row 2 (cold-burst): a fake upstream — the embedded app over the generated
 * dataset behind a middleware that counts every call and answers `delayMs` late — and a
 * connector in upstream mode (MENU_API_URL / DEVICE_API_URL pointing at it), each on
 * 127.0.0.1:0, both logging at `info` to a temp file. Background work (the device-status
 * poller) is not started, so every upstream call counted is one the burst caused.
 */
export interface BurstOptions {
  delayMs: number;
}

export interface BurstInfo {
  connectorUrl: string;
  upstreamUrl: string;
}

export interface UpstreamCalls {
  total: number;
  byPath: Record<string, number>;
}

await serveChild<BurstOptions, BurstInfo>(async ({ delayMs }) => {
  const log = new BenchLog('cold-burst');
  const calls: UpstreamCalls = { total: 0, byPath: {} };

  // A second key gives a second, equally uncached option list for a burst in a warm process.
  const inner = await buildStack({ dataset: benchDataset({ extraKeys: 1 }), logger: log.logger('info') });
  const upstreamApp = express();
  upstreamApp.use((req, _res, next) => {
    calls.total += 1;
    calls.byPath[req.path] = (calls.byPath[req.path] ?? 0) + 1;
    setTimeout(next, delayMs);
  });
  upstreamApp.use(inner.app);
  const upstream = await listenLoopback(upstreamApp);

  const connector = await buildStack({ env: { MENU_API_URL: upstream.url, DEVICE_API_URL: upstream.url }, logger: log.logger('info') });
  const front = await listenLoopback(connector.app);

  return {
    info: { connectorUrl: front.url, upstreamUrl: upstream.url },
    handlers: { calls: () => calls },
    async close() {
      await closeServer(front.server);
      await closeServer(upstream.server);
      for (const stack of [connector, inner]) {
        await stack.services.close();
        await stack.db.close();
      }
      log.close();
    },
  };
});

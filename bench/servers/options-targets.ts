import express from 'express';
import type { Server } from 'node:http';
import { serveChild } from '../lib/child.js';
import { benchDataset, benchRateLimit } from '../lib/dataset.js';
import { BenchLog, buildStack, closeServer, listenLoopback } from '../lib/stack.js';

/**
 * Child process of row 1 (options-warm): serves one target on 127.0.0.1:0.
 * - `full`: the production stack over the generated dataset, logging at `info`, background
 *   work started as main.ts does, the per-key rate limit on (`benchRateLimit` a minute);
 * - `full-limit-off`: the same with the rate limit off (RATE_LIMIT_PER_MINUTE=0);
 * - `bare-node`: a node:http server sending `body` for `path`;
 * - `bare-express`: an Express 5 app with one route sending `body` (Express defaults kept).
 */
export type TargetRole = 'full' | 'full-limit-off' | 'bare-node' | 'bare-express';

export interface TargetOptions {
  role: TargetRole;
  /** Bare targets: the path to serve and the base64 body bytes captured from the full stack. */
  path?: string;
  body?: string;
}

export interface TargetInfo {
  url: string;
}

await serveChild<TargetOptions, TargetInfo>(async (options) => {
  let server: Server;
  let url: string;
  let log: BenchLog | undefined;
  let cleanup = async () => {};
  if (options.role === 'full' || options.role === 'full-limit-off') {
    log = new BenchLog('options-warm');
    const limit = options.role === 'full' ? String(benchRateLimit) : '0';
    // As main.ts: background work started (idle here: no hooks, no watched devices).
    const stack = await buildStack({ dataset: benchDataset(), logger: log.logger('info'), start: true, env: { RATE_LIMIT_PER_MINUTE: limit } });
    ({ server, url } = await listenLoopback(stack.app));
    cleanup = async () => {
      await stack.services.close();
      await stack.db.close();
    };
  } else {
    const body = Buffer.from(options.body ?? '', 'base64');
    const path = options.path ?? '/';
    if (options.role === 'bare-node') {
      ({ server, url } = await listenLoopback((req, res) => {
        if (req.url !== path) {
          res.writeHead(404).end();
          return;
        }
        res.writeHead(200, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': body.length });
        res.end(body);
      }));
    } else {
      const app = express();
      app.get(path, (_req, res) => {
        res.type('json').send(body);
      });
      ({ server, url } = await listenLoopback(app));
    }
  }
  return {
    info: { url },
    handlers: { logLines: async () => (log ? await log.lines() : 0) },
    async close() {
      await closeServer(server);
      await cleanup();
      log?.close();
    },
  };
});

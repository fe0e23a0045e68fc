import { closeSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server, type RequestListener } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { pino, type Logger } from 'pino';
import { createApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { importDataset } from '../../src/dataset/import.js';
import { createLogger } from '../../src/logger.js';
import { buildServices, type Services } from '../../src/services.js';
import { systemClock } from '../../src/time/timestamps.js';

/**
 * The production log destination, minus the terminal: pino's default is an asynchronous
 * SonicBoom on fd 1 (`sync: false`, `minLength: 0`); here the same SonicBoom writes to a
 * file in os.tmpdir(), as stdout redirected to a file would. `describe` names it for the table.
 */
export class BenchLog {
  readonly path: string;
  readonly stream: pino.DestinationStream & { flushSync(): void; end(): void };

  constructor(label: string) {
    this.path = join(tmpdir(), `connector-bench-${label}-${process.pid}.log`);
    closeSync(openSync(this.path, 'w'));
    this.stream = pino.destination({ dest: this.path, sync: false }) as BenchLog['stream'];
  }

  static describe(): string {
    return 'pino `info` → a file in os.tmpdir() through async SonicBoom, `sync:false`, as pino’s default stdout';
  }

  logger(level = 'info'): Logger {
    return createLogger(level, this.stream);
  }

  /** Lines written so far (lets an in-flight write finish, then flushes). */
  async lines(): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 100));
    try {
      this.stream.flushSync();
    } catch {
      // flushSync throws before the file is open; the count is then a lower bound.
    }
    if (statSync(this.path).size === 0) return 0;
    let n = 0;
    const text = readFileSync(this.path);
    for (let i = 0; i < text.length; i += 1) if (text[i] === 10) n += 1;
    return n;
  }

  close(): void {
    try {
      this.stream.flushSync();
    } catch {
      // ignore: the file is deleted next
    }
    this.stream.end();
    rmSync(this.path, { force: true });
  }
}

export interface Stack {
  services: Services;
  db: Db;
}

/**
 * The full production stack (`createApp(buildServices(...))`) over an in-memory database with
 * `dataset` imported, configured through loadConfig like the real process (defaults, LOG_LEVEL
 * info, plus `env`). The caller stops it: `services.close()`, then `db.close()`.
 */
export async function buildStack(options: {
  env?: Record<string, string>;
  dataset?: unknown;
  logger: Logger;
  /** Start background work (device-status poller, webhook deliverer) as main.ts does. */
  start?: boolean;
}): Promise<Stack & { app: ReturnType<typeof createApp> }> {
  const config = loadConfig({ LOG_LEVEL: 'info', DATABASE_PATH: ':memory:', ...options.env });
  const db = await openDatabase({ path: ':memory:' });
  if (options.dataset) await importDataset(db, options.dataset, { nowMs: systemClock.now() });
  const services = buildServices({ config, logger: options.logger, clock: systemClock, db });
  if (options.start) services.start();
  return { services, db, app: createApp(services) };
}

/** Listens on 127.0.0.1:0 and resolves the base URL. */
export async function listenLoopback(handler: RequestListener | Server): Promise<{ server: Server; url: string }> {
  const server = typeof handler === 'function' ? createServer(handler) : handler;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}` };
}

export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

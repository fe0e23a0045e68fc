import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { sql } from 'kysely';
import { openDatabase, type Db, type Engine } from '../../src/db/database.js';

/**
 * Which engine the suite runs on: jest's `postgres` project sets TEST_ENGINE=postgres, and
 * every integration suite that touches storage runs once per engine.
 */
export const testEngine: Engine = process.env.TEST_ENGINE === 'postgres' ? 'postgres' : 'sqlite';

export function postgresUrl(): string {
  return process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
}

/**
 * A database for one test app. SQLite: the given file, or a private file in a temporary folder.
 * PostgreSQL: a schema of its own in the test database (named after `path` when one is
 * given, so a test can "restart" onto the same data); `drop` removes it.
 */
export async function openTestDatabase(path?: string, tuning: { timeoutMs?: number; poolSize?: number } = {}): Promise<{ db: Db; drop(): Promise<void> }> {
  const poolSize = tuning.poolSize ?? 4;
  if (testEngine === 'sqlite') {
    if (path) return { db: await openDatabase({ path, timeoutMs: tuning.timeoutMs }), drop: async () => undefined };
    // A file, as in production: WAL, and the driver's second (read) connection beside the writer.
    // It starts as a copy of a migrated file (openDatabase finds nothing left to migrate).
    const dir = mkdtempSync(join(tmpdir(), 'connector-test-'));
    copyFileSync(await migratedSqliteFile(), join(dir, 'connector.db'));
    const db = await openDatabase({ path: join(dir, 'connector.db'), timeoutMs: tuning.timeoutMs });
    return { db, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (path) {
    const schema = `t_${createHash('sha256').update(`${process.pid}:${path}`).digest('hex').slice(0, 16)}`;
    created.add(schema);
    const db = await openDatabase({ url: postgresUrl(), schema, poolSize, timeoutMs: tuning.timeoutMs });
    return { db, drop: () => dropSchemas([schema]) };
  }
  // Schemas are reused within a test file: emptied at close instead of migrated anew.
  const schema = free.pop() ?? `t_${randomBytes(8).toString('hex')}`;
  created.add(schema);
  const db = await openDatabase({ url: postgresUrl(), schema, poolSize, timeoutMs: tuning.timeoutMs });
  return {
    db,
    drop: async () => {
      await emptySchema(schema);
      free.push(schema);
    },
  };
}

/**
 * A SQLite file with every migration applied, made once per test process: a test database is
 * a copy of it, so that each of the suite's thousands of apps does not run the migrations
 * anew (about 30 ms each). Closing folds the WAL into the file, so the file holds everything.
 */
let migratedFile: Promise<string> | undefined;
function migratedSqliteFile(): Promise<string> {
  migratedFile ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'connector-template-'));
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'migrated.db');
    const db = await openDatabase({ path });
    await db.close();
    return path;
  })();
  return migratedFile;
}

const created = new Set<string>();
const free: string[] = [];

/**
 * One connection for the file's housekeeping (emptying and dropping schemas), opened at its
 * first use and ended after the file: a connection a time cost about 15 ms of each app's close.
 * Its statements run one after another (pg queues them).
 */
let housekeeping: Promise<pg.Client> | undefined;
async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  housekeeping ??= (async () => {
    const client = new pg.Client({ connectionString: postgresUrl(), connectionTimeoutMillis: 10_000 });
    client.on('error', () => {
      housekeeping = undefined;
    });
    await client.connect();
    return client;
  })().catch((err: unknown) => {
    housekeeping = undefined;
    throw err;
  });
  return work(await housekeeping);
}

async function endHousekeeping(): Promise<void> {
  const client = housekeeping;
  housekeeping = undefined;
  await (await client?.catch(() => undefined))?.end().catch(() => undefined);
}

/**
 * Empties a schema for the next app of the file: DELETE with foreign-key triggers off, and its
 * sequences restarted (as TRUNCATE … RESTART IDENTITY would, which takes about 90 ms for the
 * schema's 17 tables where this takes a few).
 */
async function emptySchema(schema: string): Promise<void> {
  await withClient(async (client) => {
    let statements = emptying.get(schema);
    if (!statements) {
      // The schema's tables and sequences do not change once it is migrated: listed once.
      const { rows } = await client.query<{ name: string; kind: string }>(
        `SELECT c.relname AS name, c.relkind AS kind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = $1 AND c.relkind IN ('r', 'S') AND c.relname <> 'schema_version'`,
        [schema],
      );
      const name = (r: { name: string }) => `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(r.name)}`;
      statements = [
        'SET session_replication_role = replica',
        ...rows.filter((r) => r.kind === 'r').map((r) => `DELETE FROM ${name(r)}`),
        ...rows.filter((r) => r.kind === 'S').map((r) => `ALTER SEQUENCE ${name(r)} RESTART`),
        'SET session_replication_role = DEFAULT',
      ].join('; ');
      emptying.set(schema, statements);
    }
    await client.query(statements);
  });
}
const emptying = new Map<string, string>();

async function dropSchemas(schemas: string[]): Promise<void> {
  if (schemas.length === 0) return;
  await withClient(async (client) => {
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`);
  });
  for (const schema of schemas) created.delete(schema);
}

/** Drops every schema this test file made (jest's setup file runs it after the file). */
export async function dropTestSchemas(): Promise<void> {
  free.length = 0;
  try {
    await dropSchemas([...created]);
  } finally {
    await endHousekeeping();
  }
}

/**
 * Raw SQL for tests that set up or inspect state directly, with `?` placeholders on either
 * engine. Tests keep to SQL both engines speak.
 */
export async function rawQuery<T = Record<string, unknown>>(db: Db, text: string, ...params: unknown[]): Promise<T[]> {
  const parts = text.split('?');
  if (parts.length !== params.length + 1) throw new Error(`expected ${parts.length - 1} parameters, got ${params.length}`);
  const strings = Object.assign([...parts], { raw: parts }) as unknown as TemplateStringsArray;
  const result = await sql<T>(strings, ...params).execute(db.kysely);
  return result.rows;
}

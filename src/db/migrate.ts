import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { hookIdentity, targetOrigin } from './hook-identity.js';
import { backfillLabelsPostgres, backfillLabelsSqlite, backfillMenuGroupsPostgres, backfillMenuGroupsSqlite } from './backfill-labels.js';
import { migrations, renderMigration } from './migrations.js';
import type { Tables } from './tables.js';

/** Work a migration needs beyond its SQL, keyed by the version it brings the schema to. */
const backfills: Record<number, (rows: HookRow[]) => Array<{ id: string; identity: string; target_origin: string }>> = {
  3: (hooks) =>
    hooks.map((h) => ({ id: h.id, identity: hookIdentity(h.key_hash, h.target_url, h.events, h.device_ids), target_origin: targetOrigin(h.target_url) })),
};

/** Work computed in JavaScript, by the version it brings the schema to, per engine. */
const computed: Record<number, { sqlite(raw: BetterSqlite3.Database): void; postgres(trx: Kysely<Tables>): Promise<void> }> = {
  8: { sqlite: backfillLabelsSqlite, postgres: backfillLabelsPostgres },
  10: { sqlite: backfillMenuGroupsSqlite, postgres: backfillMenuGroupsPostgres },
};

interface HookRow {
  id: string;
  key_hash: string;
  target_url: string;
  events: string;
  device_ids: string | null;
}

function checkVersion(current: number): void {
  if (current > migrations.length) {
    throw new Error(`Database schema version ${current} is newer than this build knows (${migrations.length})`);
  }
}

/** SQLite: applies each migration above `user_version` in its own transaction. */
export function migrateSqlite(raw: BetterSqlite3.Database): void {
  const current = raw.pragma('user_version', { simple: true }) as number;
  checkVersion(current);
  for (let version = current + 1; version <= migrations.length; version += 1) {
    raw.transaction(() => {
      raw.exec(renderMigration(version - 1, 'sqlite'));
      const backfill = backfills[version];
      if (backfill) {
        const update = raw.prepare('UPDATE hooks SET identity = ?, target_origin = ? WHERE id = ?');
        const rows = raw.prepare('SELECT id, key_hash, target_url, events, device_ids FROM hooks').all() as HookRow[];
        for (const row of backfill(rows)) update.run(row.identity, row.target_origin, row.id);
      }
      computed[version]?.sqlite(raw);
      raw.pragma(`user_version = ${version}`);
    })();
  }
}

/** An arbitrary constant naming the connector's migration lock among PostgreSQL advisory locks. */
const migrationLock = 7_420_913_001;

/**
 * PostgreSQL: applies pending migrations under a session advisory lock, so replicas starting
 * together apply each once (the others wait, then find nothing to do).
 */
export async function migratePostgres(kysely: Kysely<Tables>): Promise<void> {
  await kysely.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${migrationLock})`.execute(conn);
    try {
      await sql`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`.execute(conn);
      const row = await sql<{ version: number }>`SELECT version FROM schema_version`.execute(conn);
      const current = row.rows[0]?.version ?? 0;
      checkVersion(current);
      if (row.rows.length === 0) await sql`INSERT INTO schema_version (version) VALUES (0)`.execute(conn);
      for (let version = current + 1; version <= migrations.length; version += 1) {
        await conn.transaction().execute(async (trx) => {
          await sql.raw(renderMigration(version - 1, 'postgres')).execute(trx);
          const backfill = backfills[version];
          if (backfill) {
            const rows = await trx.selectFrom('hooks').select(['id', 'key_hash', 'target_url', 'events', 'device_ids']).execute();
            for (const { id, ...set } of backfill(rows)) await trx.updateTable('hooks').set(set).where('id', '=', id).execute();
          }
          await computed[version]?.postgres(trx);
          await sql`UPDATE schema_version SET version = ${version}`.execute(trx);
        });
      }
    } finally {
      await sql`SELECT pg_advisory_unlock(${migrationLock})`.execute(conn);
    }
  });
}

/** The schema version a database is at (0: none applied yet); reads only. */
export async function schemaVersion(kysely: Kysely<Tables>, engine: 'sqlite' | 'postgres'): Promise<number> {
  if (engine === 'sqlite') {
    const { rows } = await sql<{ user_version: number }>`PRAGMA user_version`.execute(kysely);
    return rows[0]?.user_version ?? 0;
  }
  const { rows } = await sql<{ present: boolean }>`SELECT to_regclass('schema_version') IS NOT NULL AS present`.execute(kysely);
  if (!rows[0]?.present) return 0;
  const version = await sql<{ version: number }>`SELECT version FROM schema_version`.execute(kysely);
  return version.rows[0]?.version ?? 0;
}

/** Versions above `current` that this build would apply; throws when the database is newer than the build. */
export function pendingVersions(current: number): number[] {
  checkVersion(current);
  return Array.from({ length: migrations.length - current }, (_, i) => current + i + 1);
}

/**
 * One line saying what a migration does on an engine (`npm run migrate -- --dry-run`): its
 * statements by kind and name (`ALTER TABLE hooks ADD COLUMN disabled_at`), and whether rows are
 * filled in by a backfill.
 */
export function describeMigration(version: number, engine: 'sqlite' | 'postgres'): string {
  const text = renderMigration(version - 1, engine).replace(/--[^\n]*/g, '');
  const statements = text
    .split(';')
    .map((s) => s.replace(/\s+/g, ' ').trim())
    .filter((s) => s !== '' && s !== 'SELECT 1')
    .map((s) =>
      s
        .split(/\s*\(|\s+(?:ON|SET|WHERE)\s+/)[0]!
        .split(' ')
        .slice(0, 6)
        .join(' '),
    );
  if (backfills[version] || computed[version]) statements.push('backfill of existing rows');
  return statements.length > 0 ? statements.join('; ') : 'nothing to change on this engine';
}

import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { SecretBox } from './secret-box.js';

/**
 * Every stored column that holds a secret sealed by `SecretBox`, with its table's primary key.
 * A new sealed column is named `*_cipher` and listed here (test/integration/secret-rotation.test.ts
 * compares this list with the live schema), so the start-up check and `npm run rotate-secret`
 * cover it.
 */
export const sealedColumns = [
  { table: 'hooks', key: 'id', column: 'secret_cipher' },
  { table: 'hooks', key: 'id', column: 'secret_previous_cipher' },
  { table: 'watches', key: 'key_hash', column: 'key_cipher' },
] as const;

type SealedColumn = (typeof sealedColumns)[number];

export interface SealedReport {
  /** Opened by `CONNECTOR_SECRET`: nothing to do. */
  current: number;
  /** Opened only by `CONNECTOR_SECRET_PREVIOUS` (re-sealed by `resealSecrets`). */
  previous: number;
  /** Re-sealed with `CONNECTOR_SECRET` by this run. */
  resealed: number;
  /** Changed by the service between the read and the conditional update: already sealed anew by it. */
  changedMeanwhile: number;
  /** Opened by neither, per `table.column`. */
  unreadable: Record<string, number>;
}

/** Rows read (and, when re-sealing, written in one transaction) at a time. */
const sliceRows = 500;

interface SealedRow {
  row_key: string;
  sealed: string;
}

/** The column's non-null values in key order, a slice at a time, yielding to the event loop between slices. */
async function* slicesOf(db: Db, entry: SealedColumn): AsyncGenerator<SealedRow[]> {
  let after: string | null = null;
  for (;;) {
    const from: RawBuilder<unknown> = after === null ? sql`` : sql`AND ${sql.ref(entry.key)} > ${after}`;
    const { rows }: { rows: SealedRow[] } = await sql<SealedRow>`SELECT ${sql.ref(entry.key)} AS row_key, ${sql.ref(entry.column)} AS sealed
      FROM ${sql.table(entry.table)} WHERE ${sql.ref(entry.column)} IS NOT NULL ${from}
      ORDER BY ${sql.ref(entry.key)} LIMIT ${sliceRows}`.execute(db.kysely);
    if (rows.length === 0) return;
    yield rows;
    after = rows[rows.length - 1]!.row_key;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function emptyReport(): SealedReport {
  return { current: 0, previous: 0, resealed: 0, changedMeanwhile: 0, unreadable: {} };
}

/** Reads every stored secret and says which configured secret opens it; writes nothing. */
export async function checkSealedSecrets(db: Db, box: SecretBox): Promise<SealedReport> {
  return walk(db, box, false);
}

/**
 * `npm run rotate-secret`: every stored secret that only `CONNECTOR_SECRET_PREVIOUS` opens is
 * sealed again with `CONNECTOR_SECRET`. Safe while replicas serve: each row is updated only if
 * it still holds the text that was read (a hook secret rotated meanwhile is left as the service
 * wrote it), a slice per transaction. Running it again finds nothing to do.
 */
export async function resealSecrets(db: Db, box: SecretBox): Promise<SealedReport> {
  return walk(db, box, true);
}

async function walk(db: Db, box: SecretBox, reseal: boolean): Promise<SealedReport> {
  const report = emptyReport();
  for (const entry of sealedColumns) {
    const name = `${entry.table}.${entry.column}`;
    for await (const rows of slicesOf(db, entry)) {
      const stale: Array<{ row: SealedRow; plain: string }> = [];
      for (const row of rows) {
        const opened = box.tryOpen(row.sealed);
        if (opened === null) report.unreadable[name] = (report.unreadable[name] ?? 0) + 1;
        else if (opened.sealedWith === 'current') report.current += 1;
        else stale.push({ row, plain: opened.plain });
      }
      report.previous += stale.length;
      if (!reseal || stale.length === 0) continue;
      const updated = await db.transaction(async (trx) => {
        let count = 0;
        for (const { row, plain } of stale) {
          const result = await sql`UPDATE ${sql.table(entry.table)} SET ${sql.ref(entry.column)} = ${box.seal(plain)}
            WHERE ${sql.ref(entry.key)} = ${row.row_key} AND ${sql.ref(entry.column)} = ${row.sealed}`.execute(trx);
          count += Number(result.numAffectedRows ?? 0);
        }
        return count;
      });
      report.resealed += updated;
      report.changedMeanwhile += stale.length - updated;
    }
  }
  return report;
}

/**
 * The one start-up line when stored secrets are sealed with neither configured secret (a wrong
 * `CONNECTOR_SECRET`, or a rotation whose previous secret was dropped too early); null when every
 * stored secret opens.
 */
export function unreadableSecretsLine(report: SealedReport): string | null {
  const entries = Object.entries(report.unreadable);
  if (entries.length === 0) return null;
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  const where = entries.map(([name, count]) => `${name}: ${count}`).join(', ');
  return (
    `CONNECTOR_SECRET does not open ${total} stored secret${total === 1 ? '' : 's'} (${where}): ` +
    'set CONNECTOR_SECRET to the secret they were sealed with, or, while rotating, set that one as CONNECTOR_SECRET_PREVIOUS beside the new one (docs/deploy.md)'
  );
}

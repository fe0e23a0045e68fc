import { resolve } from 'node:path';
import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import type { CatalogOrigin } from '../db/tables.js';
import { demoDatasetPath } from '../paths.js';
import { importDataset, readDatasetFile, type ImportSummary } from './import.js';

export interface Bootstrap {
  /** What was imported at this start, if anything. */
  imported: ImportSummary | null;
  /** True when the catalog served is the bundled demo as imported, its relative times counted from this start. */
  demo: boolean;
}

/**
 * `DATASET` (docs/configuration.md): a given dataset is imported at every start, before listening.
 * With none, the bundled demo dataset is imported when the catalog is empty, and imported again
 * at every start while the catalog is still that demo: its heartbeats are relative (`now-30s`),
 * so a second start an hour later serves screens that were online a moment ago, not an hour ago.
 * Once anything else was imported, the catalog is served as stored.
 */
export async function bootstrapCatalog(db: Db, datasetPath: string | undefined, nowMs: number, logger: Logger): Promise<Bootstrap> {
  const file = datasetPath ?? ((await servesDemo(db)) ? demoDatasetPath : undefined);
  if (!file) return { imported: null, demo: false };
  const origin: CatalogOrigin = resolve(file) === demoDatasetPath ? 'demo' : 'dataset';
  const imported = await importDataset(db, readDatasetFile(file), { nowMs, origin });
  logger.info({ file, upserted: imported.upserted }, 'dataset imported');
  return { imported, demo: origin === 'demo' };
}

/** The catalog is empty, or still the bundled demo as imported. */
async function servesDemo(db: Db): Promise<boolean> {
  if (await isCatalogEmpty(db)) return true;
  return (await catalogOrigin(db)) === 'demo';
}

/**
 * Where the catalog came from. A catalog imported before its origin was recorded counts as the
 * demo when its accounts are exactly the demo's.
 */
export async function catalogOrigin(db: Db): Promise<CatalogOrigin | null> {
  const row = await db.kysely.selectFrom('catalog_origin').select('origin').where('id', '=', 1).executeTakeFirst();
  if (row) return row.origin;
  if (await isCatalogEmpty(db)) return null;
  const accounts = (await db.kysely.selectFrom('accounts').select('id').execute()).map((r) => r.id).sort();
  return accounts.join(',') === demoAccountIds().join(',') ? 'demo' : 'dataset';
}

function demoAccountIds(): string[] {
  const demo = readDatasetFile(demoDatasetPath) as { accounts?: Array<{ id: string }> };
  return (demo.accounts ?? []).map((a) => a.id).sort();
}

export async function isCatalogEmpty(db: Db): Promise<boolean> {
  return (await db.kysely.selectFrom('accounts').select('id').limit(1).executeTakeFirst()) === undefined;
}

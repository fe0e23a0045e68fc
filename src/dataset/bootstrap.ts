import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { demoDatasetPath } from '../paths.js';
import { importDataset, readDatasetFile, type ImportSummary } from './import.js';

/**
 * `DATASET` (docs/configuration.md): a given dataset is imported at every start, before listening; with
 * none and an empty catalog, the bundled demo dataset is imported so `npm start` just works.
 */
export async function bootstrapCatalog(db: Db, datasetPath: string | undefined, nowMs: number, logger: Logger): Promise<ImportSummary | null> {
  const file = datasetPath ?? ((await isCatalogEmpty(db)) ? demoDatasetPath : undefined);
  if (!file) return null;
  const summary = await importDataset(db, readDatasetFile(file), { nowMs });
  logger.info({ file, upserted: summary.upserted }, 'dataset imported');
  return summary;
}

export async function isCatalogEmpty(db: Db): Promise<boolean> {
  return (await db.kysely.selectFrom('accounts').select('id').limit(1).executeTakeFirst()) === undefined;
}

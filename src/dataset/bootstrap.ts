import type { Logger } from 'pino';
import type { Db } from '../db/database.js';
import { demoDatasetPath } from '../paths.js';
import { importDataset, readDatasetFile, type ImportSummary } from './import.js';

/**
 * CONTRACT 1 `DATASET`: a given dataset is imported at every start, before listening; with
 * none and an empty catalog, the bundled demo dataset is imported so `npm start` just works.
 */
export function bootstrapCatalog(db: Db, datasetPath: string | undefined, nowMs: number, logger: Logger): ImportSummary | null {
  const file = datasetPath ?? (isCatalogEmpty(db) ? demoDatasetPath : undefined);
  if (!file) return null;
  const summary = importDataset(db, readDatasetFile(file), { nowMs });
  logger.info({ file, upserted: summary.upserted }, 'dataset imported');
  return summary;
}

export function isCatalogEmpty(db: Db): boolean {
  return db.prepare('SELECT 1 FROM accounts LIMIT 1').get() === undefined;
}

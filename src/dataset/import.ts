import type { Db } from '../db/database.js';
import type { CatalogOrigin } from '../db/tables.js';
import { formatMicros } from '../time/timestamps.js';
import { DatasetError, parseDataset } from './parse.js';
import { validateDataset } from './validate.js';
import { countsOf, emptyCounts, pruneMissing, writeDataset, type EntityCounts } from './write.js';

export { DatasetError, jsonPath, parseDataset, readDatasetFile, type DatasetIssue } from './parse.js';
export { toGroup, type EntityCounts } from './write.js';

export interface ImportOptions {
  prune?: boolean;
  /** Milliseconds since the epoch that relative timestamps (`now-10m`) are resolved against. */
  nowMs: number;
  /** `demo` only for the bundled demo dataset; any other import makes the catalog a `dataset` one. */
  origin?: CatalogOrigin;
}

export interface ImportSummary {
  upserted: EntityCounts;
  pruned: EntityCounts;
}

/**
 * Upserts a dataset by id in one transaction: all of it or nothing (docs/datasets.md). With `prune`,
 * whatever the file lacks is deleted too. A plain `key` is hashed here and never stored.
 */
export async function importDataset(db: Db, document: unknown, options: ImportOptions): Promise<ImportSummary> {
  const dataset = parseDataset(document);
  // References are checked inside the transaction, against what it will write over.
  return db.transaction(async (trx) => {
    const issues = await validateDataset(trx, dataset, options.nowMs, Boolean(options.prune));
    if (issues.length > 0) throw new DatasetError(`Invalid dataset: ${issues.length} problem(s)`, issues);
    const pruned = options.prune ? await pruneMissing(trx, dataset) : emptyCounts();
    await writeDataset(trx, dataset, options.nowMs);
    // A big import: fresh planner statistics, so the first requests after it already read the
    // per-user indexes (docs/options.md).
    await db.refreshStatistics(['devices', 'device_access'], dataset.devices.length, trx);
    const origin = { origin: options.origin ?? 'dataset', imported_at: formatMicros(options.nowMs * 1000) } as const;
    await trx
      .insertInto('catalog_origin')
      .values({ id: 1, ...origin })
      .onConflict((oc) => oc.column('id').doUpdateSet(origin))
      .execute();
    return { upserted: countsOf(dataset), pruned };
  });
}

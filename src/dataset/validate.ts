import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { parseTimestamp } from '../time/timestamps.js';
import type { DatasetIssue } from './parse.js';
import { checkReferences } from './references.js';
import type { Dataset } from './schema.js';

/** Every problem a parsed dataset can still have: timestamps out of range, ids and references (docs/datasets.md). */
export async function validateDataset(db: Kysely<Tables>, dataset: Dataset, nowMs: number, prune: boolean): Promise<DatasetIssue[]> {
  return [...checkTimestamps(dataset, nowMs), ...(await checkReferences(db, dataset, prune))];
}

/**
 * The schema validates relative timestamps against the epoch; one far in the future
 * (`now+90000d`) can still fall out of range at the real import time, and used to be written
 * as 1970. Checked here, before the transaction, so the error carries its path.
 */
function checkTimestamps(dataset: Dataset, nowMs: number): DatasetIssue[] {
  const issues: DatasetIssue[] = [];
  const fields = ['registered_at', 'published_at', 'last_heartbeat_at', 'updated_at', 'created_at'] as const;
  dataset.devices.forEach((device, i) => {
    for (const field of fields) {
      const value = device[field];
      if (value !== null && parseTimestamp(value, nowMs) === null) {
        issues.push({ path: `devices[${i}].${field}`, message: 'is out of the supported time range' });
      }
    }
  });
  return issues;
}

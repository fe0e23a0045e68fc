import { type DatasetError } from './import.js';

/** Human-readable lines for a failed import: the message, then `path: problem` per issue. */
export function describeDatasetError(err: DatasetError, max = 20): string {
  const lines = [err.message];
  for (const issue of err.issues.slice(0, max)) lines.push(`  ${issue.path}: ${issue.message}`);
  if (err.issues.length > max) lines.push(`  … and ${err.issues.length - max} more`);
  return lines.join('\n');
}

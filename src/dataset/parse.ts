import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { locateJsonError } from './json-position.js';
import { datasetNestingIssues } from './nesting.js';
import { datasetSchema, type Dataset } from './schema.js';

/** Reading a dataset document: JSON, the nesting limits, then the schema (docs/datasets.md). */

export interface DatasetIssue {
  path: string;
  message: string;
}

/** A dataset that cannot be imported; nothing was written. */
export class DatasetError extends Error {
  constructor(
    message: string,
    readonly issues: DatasetIssue[],
  ) {
    super(message);
    this.name = 'DatasetError';
  }
}

/** `devices[3].access[0].user_id` from a zod issue path. */
export function jsonPath(path: ReadonlyArray<PropertyKey>): string {
  return (
    path.reduce<string>((out, part) => {
      if (typeof part === 'number') return `${out}[${part}]`;
      return out ? `${out}.${String(part)}` : String(part);
    }, '') || '$'
  );
}

function zodIssues(error: z.ZodError): DatasetIssue[] {
  return error.issues.flatMap((issue) =>
    // zod reports unknown fields at the enclosing object; name each field's own path instead
    // (`menus[0].groups[0].items[0].in_stock`), so the path points at the typo.
    issue.code === 'unrecognized_keys'
      ? issue.keys.map((key) => ({ path: jsonPath([...issue.path, key]), message: `unknown field "${key}"` }))
      : [{ path: jsonPath(issue.path), message: issue.message }],
  );
}

/** Parses and validates a dataset document; throws DatasetError with JSON paths. */
export function parseDataset(document: unknown): Dataset {
  // Before the schema: its recursive walk is only safe on trees of bounded depth.
  const tooDeep = datasetNestingIssues(document).map((issue) => ({ path: jsonPath(issue.path), message: issue.message }));
  if (tooDeep.length > 0) throw new DatasetError(`Invalid dataset: ${tooDeep.length} problem(s)`, tooDeep);
  const parsed = datasetSchema.safeParse(document);
  if (!parsed.success) {
    const issues = zodIssues(parsed.error);
    throw new DatasetError(`Invalid dataset: ${issues.length} problem(s)`, issues);
  }
  return parsed.data;
}

export function readDatasetFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new DatasetError(`Cannot read dataset ${file}: ${(err as Error).message}`, []);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    const at = locateJsonError(text);
    const where = at ? ` at line ${at.line}, column ${at.column}` : '';
    throw new DatasetError(`Dataset ${file} is not valid JSON${where}: ${at?.reason ?? (err as Error).message}`, []);
  }
}

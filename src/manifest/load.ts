import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { jsonPath } from '../dataset/parse.js';
import { projectRoot } from '../paths.js';
import { manifestSchema, type Manifest } from './schema.js';

export const connectorManifestPath = join(projectRoot, 'manifests', 'connector.json');

export class ManifestError extends Error {}

/** Validates a manifest document; the error is one line naming the file and the JSON path. */
export function parseManifest(document: unknown, file = 'manifest'): Manifest {
  const parsed = manifestSchema.safeParse(document);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ManifestError(`Invalid manifest ${file} at ${jsonPath(issue.path)}: ${issue.message}`);
  }
  return parsed.data;
}

export function loadManifest(file = connectorManifestPath): Manifest {
  let document: unknown;
  try {
    document = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ManifestError(`Invalid manifest ${file}: ${(err as Error).message}`);
  }
  return parseManifest(document, file);
}

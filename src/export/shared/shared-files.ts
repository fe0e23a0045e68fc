import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { templateDir } from './app-files.js';

/**
 * The files every app shares (src/export/shared/template/, copied into dist/ by the build): the
 * Standard Webhooks verification, written once in standard-webhooks.ts and compiled for the
 * JavaScript apps, and the manifest types generated from the manifest schema (generated.ts).
 * Each exporter writes the one it needs over its template's stand-in of the same path (a
 * one-line re-export that lets the template type-check in the repository).
 */
const dir = templateDir(import.meta.url);

export type SharedFile = 'standard-webhooks.ts' | 'standard-webhooks.mjs' | 'standard-webhooks.cjs' | 'manifest.d.ts';

export function sharedFile(name: SharedFile): string {
  return readFileSync(join(dir, name), 'utf8');
}

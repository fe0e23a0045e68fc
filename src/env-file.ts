import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * Reads `.env` from the working directory into `process.env` when the file exists (docs/configuration.md),
 * with Node's own parser (`process.loadEnvFile`, Node ≥ 20.12). A variable already set in the
 * environment wins over the file, even when set to an empty string. Throws one line when the
 * file exists but cannot be read.
 */
export function loadDotEnv(dir = process.cwd()): void {
  const file = resolve(dir, '.env');
  if (!existsSync(file)) return;
  if (typeof process.loadEnvFile !== 'function') {
    console.warn(`Ignoring ${file}: reading .env needs Node 20.12 or later (this is ${process.version})`);
    return;
  }
  try {
    process.loadEnvFile(file);
  } catch (err) {
    throw new DotEnvError(`Cannot read ${file}: ${(err as Error).message}`);
  }
}

export class DotEnvError extends Error {}

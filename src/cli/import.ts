import { parseArgs } from 'node:util';
import { fail } from './fail.js';

const usage = 'Usage: npm run import -- [--prune] <dataset.json>';

/** `npm run import -- [--prune] <file>`: upserts a dataset into DATABASE_PATH, atomically. */
async function run(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ options: { prune: { type: 'boolean', default: false } }, allowPositionals: true });
  } catch (err) {
    fail(`${(err as Error).message}\n${usage}`);
  }
  const [file, ...extra] = parsed.positionals;
  if (!file || extra.length > 0) fail(usage);
  // Loaded once the arguments are known good: a usage error is printed without the dataset and database modules.
  const [{ DatasetError, importDataset, readDatasetFile }, { describeDatasetError }, { cliContext }] = await Promise.all([
    import('../dataset/import.js'),
    import('../dataset/report.js'),
    import('./context.js'),
  ]);
  const { config, db } = await cliContext();
  try {
    const summary = await importDataset(db, readDatasetFile(file), { nowMs: Date.now(), prune: parsed.values.prune });
    const counts = (c: Record<string, number>) =>
      Object.entries(c)
        .map(([k, v]) => `${v} ${k}`)
        .join(', ');
    console.log(`Imported ${file} into ${config.DATABASE_URL ? 'PostgreSQL' : config.DATABASE_PATH}: ${counts(summary.upserted)}.`);
    if (parsed.values.prune) console.log(`Pruned: ${counts(summary.pruned)}.`);
  } catch (err) {
    if (err instanceof DatasetError) fail(`${describeDatasetError(err)}\nNothing was imported.`);
    throw err;
  } finally {
    await db.close();
  }
}

await run();

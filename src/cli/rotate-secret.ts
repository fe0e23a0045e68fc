import { parseArgs } from 'node:util';
import { createLogger } from '../logger.js';
import { connectorSecretBox } from '../crypto/secret-box.js';
import { checkSealedSecrets, resealSecrets, unreadableSecretsLine } from '../crypto/sealed-secrets.js';
import { cliContext, fail } from './context.js';

const usage = 'Usage: npm run rotate-secret [-- --dry-run]';

/**
 * `npm run rotate-secret` (docs/deploy.md, "Rotating CONNECTOR_SECRET"): with the new secret in
 * CONNECTOR_SECRET and the old one in CONNECTOR_SECRET_PREVIOUS, re-seals every stored secret
 * (webhook signing secrets, upstream keys the poller uses) with the new one. Safe while replicas
 * serve, and safe to run again. `--dry-run` only counts. Exits 1 when some stored secret opens
 * with neither.
 */
async function run(): Promise<void> {
  let dryRun = false;
  try {
    dryRun = parseArgs({ options: { 'dry-run': { type: 'boolean', default: false } } }).values['dry-run'] ?? false;
  } catch (err) {
    fail(`${(err as Error).message}\n${usage}`);
  }
  const { config, db } = await cliContext();
  try {
    const box = connectorSecretBox(config, createLogger('warn'));
    const report = dryRun ? await checkSealedSecrets(db, box) : await resealSecrets(db, box);
    if (dryRun) {
      console.log(`${report.previous} stored secrets would be re-sealed with CONNECTOR_SECRET; ${report.current} already are.`);
    } else {
      const meanwhile = report.changedMeanwhile > 0 ? `; ${report.changedMeanwhile} were changed by the service meanwhile and are sealed with it already` : '';
      console.log(`Re-sealed ${report.resealed} stored secrets with CONNECTOR_SECRET; ${report.current} already were${meanwhile}.`);
    }
    const unreadable = unreadableSecretsLine(report);
    if (unreadable) fail(unreadable);
    if (!dryRun && config.CONNECTOR_SECRET_PREVIOUS)
      console.log('Every stored secret opens with CONNECTOR_SECRET: CONNECTOR_SECRET_PREVIOUS may now be removed from every replica.');
  } finally {
    await db.close();
  }
}

await run();

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';

/**
 * What every replica of a local cluster must share and a restart must find again: the embedded
 * server's superuser password (fixed at initdb) and CONNECTOR_SECRET (it seals the upstream
 * keys stored in the shared database, so all replicas need the same one). Generated once, kept
 * in a 0600 JSON file.
 */
const secretsSchema = z.object({
  postgresPassword: z.string().min(16),
  connectorSecret: z.string().regex(/^[0-9a-f]{64}$/),
});

export type ClusterSecrets = z.infer<typeof secretsSchema>;

export function loadClusterSecrets(path: string): ClusterSecrets {
  if (existsSync(path)) {
    let parsed;
    try {
      parsed = secretsSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    } catch {
      parsed = null;
    }
    if (!parsed?.success) throw new Error(`${path} is not a cluster secrets file (delete it, with the PostgreSQL data beside it, to start over)`);
    return parsed.data;
  }
  const secrets: ClusterSecrets = {
    postgresPassword: randomBytes(18).toString('base64url'),
    connectorSecret: randomBytes(32).toString('hex'),
  };
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(secrets, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return secrets;
}

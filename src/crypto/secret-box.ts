import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { decodeSecret } from '../config.js';

/**
 * AES-256-GCM for secrets the connector must be able to read back (upstream keys it polls
 * with, webhook signing secrets). Format: `v1.<iv>.<tag>.<ciphertext>`, base64url parts.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(secret: Buffer) {
    // Any 32+ byte secret becomes exactly 32 key bytes.
    this.key = secret.length === 32 ? secret : createHash('sha256').update(secret).digest();
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** Throws when the text was not sealed with this secret (or was tampered with). */
  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || !iv || !tag || data === undefined) throw new Error('not a sealed secret');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/**
 * docs/configuration.md `CONNECTOR_SECRET`: the configured secret, or one generated once and kept in a
 * 0600 file beside the database (with a warning). An in-memory database gets a throwaway one.
 */
export function connectorSecret(configured: string | undefined, databasePath: string, logger: Logger): Buffer {
  if (configured) return decodeSecret(configured)!;
  if (databasePath === ':memory:') return randomBytes(32);
  const file = join(dirname(databasePath), 'connector.secret');
  if (existsSync(file)) {
    const stored = decodeSecret(readFileSync(file, 'utf8'));
    if (!stored) throw new Error(`${file} does not hold a 32+ byte hex secret`);
    return stored;
  }
  const secret = randomBytes(32);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${secret.toString('hex')}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  logger.warn({ file }, 'CONNECTOR_SECRET is not set: generated one and stored it beside the database; set CONNECTOR_SECRET in production');
  return secret;
}

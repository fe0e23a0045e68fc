import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from 'pino';
import { decodeSecret } from '../config.js';

/**
 * AES-256-GCM for secrets the connector must be able to read back (upstream keys it polls
 * with, webhook signing secrets). Format: `v1.<iv>.<tag>.<ciphertext>`, base64url parts.
 *
 * Rotation (docs/deploy.md, "Rotating CONNECTOR_SECRET"): `seal` always uses the current
 * secret; `open` tries the current one, then the previous one (`CONNECTOR_SECRET_PREVIOUS`),
 * so replicas started with both read what either sealed while `npm run rotate-secret` re-seals.
 */
export class SecretBox {
  private readonly key: Buffer;
  private readonly previousKey: Buffer | null;

  constructor(secret: Buffer, previous?: Buffer) {
    this.key = keyOf(secret);
    this.previousKey = previous ? keyOf(previous) : null;
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return ['v1', iv, cipher.getAuthTag(), data].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
  }

  /** Throws when the text was sealed with neither configured secret (or was tampered with). */
  open(sealed: string): string {
    const opened = this.tryOpen(sealed);
    if (opened === null) throw new Error('not a sealed secret, or sealed with another CONNECTOR_SECRET');
    return opened.plain;
  }

  /**
   * Which configured secret opens the text (`current` or `previous`) and what it holds; null
   * when neither does.
   */
  tryOpen(sealed: string): { plain: string; sealedWith: 'current' | 'previous' } | null {
    const current = openWith(this.key, sealed);
    if (current !== null) return { plain: current, sealedWith: 'current' };
    const previous = this.previousKey ? openWith(this.previousKey, sealed) : null;
    return previous === null ? null : { plain: previous, sealedWith: 'previous' };
  }
}

/** Any 32+ byte secret becomes exactly 32 key bytes. */
function keyOf(secret: Buffer): Buffer {
  return secret.length === 32 ? secret : createHash('sha256').update(secret).digest();
}

function openWith(key: Buffer, sealed: string): string | null {
  const [version, iv, tag, data, extra] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || data === undefined || extra !== undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
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

/** The box every sealed secret goes through: `CONNECTOR_SECRET` (or the generated one), and `CONNECTOR_SECRET_PREVIOUS` to read with during a rotation. */
export function connectorSecretBox(
  config: { CONNECTOR_SECRET?: string; CONNECTOR_SECRET_PREVIOUS?: string; DATABASE_PATH: string },
  logger: Logger,
): SecretBox {
  const previous = config.CONNECTOR_SECRET_PREVIOUS ? decodeSecret(config.CONNECTOR_SECRET_PREVIOUS)! : undefined;
  return new SecretBox(connectorSecret(config.CONNECTOR_SECRET, config.DATABASE_PATH, logger), previous);
}

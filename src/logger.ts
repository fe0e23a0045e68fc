import { pino, type Logger } from 'pino';

/**
 * Paths that may hold a key. The app never logs headers or keys on purpose; redaction is the
 * net under that rule, so a future `logger.info({ req })` cannot leak a secret.
 */
const redactPaths = [
  'key',
  'apiKey',
  'secret',
  'authorization',
  'headers.authorization',
  'headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  '*.key',
  '*.apiKey',
  '*.secret',
  '*.authorization',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
];

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' }, base: undefined }, destination);
}

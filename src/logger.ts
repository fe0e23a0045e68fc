import { createRequire } from 'node:module';
import { pino, type Logger } from 'pino';
import type PinoPretty from 'pino-pretty';
import { LogSink } from './log-sink.js';

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

export type LogFormat = 'auto' | 'pretty' | 'json';

/**
 * Builds a logger. Without a destination it writes JSON lines to stdout through the one
 * shared stdout sink (never blocks, bounded; see LogSink).
 */
export function createLogger(level: string, destination: pino.DestinationStream = stdoutSink('json')): Logger {
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' }, base: undefined }, destination);
}

const sinks = new Map<'pretty' | 'json', LogSink>();

/**
 * The process's stdout sink in `format` (one per format, so stdout gets few listeners):
 * `pretty` = one human-readable line per entry (pino-pretty, fields inline), `json` = one
 * JSON object a line, `auto` = pretty when stdout is a terminal. Redaction happens in the
 * logger, before either format.
 */
export function stdoutSink(format: LogFormat): LogSink {
  const tty = process.stdout.isTTY === true;
  const chosen = format === 'pretty' || (format === 'auto' && tty) ? 'pretty' : 'json';
  let sink = sinks.get(chosen);
  if (!sink) {
    sink = new LogSink({ stream: process.stdout, format: chosen === 'pretty' ? prettyLine(tty) : undefined, coalesce: true });
    sinks.set(chosen, sink);
  }
  return sink;
}

/** A JSON log line as one readable line: time, level, message, then the fields inline. */
export function prettyLine(colorize: boolean): (line: string) => string {
  // Loaded on first use: a process that logs JSON (stdout not a terminal) never needs pino-pretty and its modules.
  const pinoPretty = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  return pinoPretty.prettyFactory({ colorize, singleLine: true, translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l' });
}

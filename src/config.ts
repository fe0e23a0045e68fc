import { z } from 'zod';

/**
 * The only reader of `process.env` (docs/configuration.md). Every variable is parsed once at
 * start; an invalid value stops the process with one line naming the variable.
 */
const boolFlag = z
  .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
  .transform((v) => v === 'true' || v === '1');

function intIn(min: number, max: number) {
  return z
    .string()
    .regex(/^\d+$/, `must be an integer from ${min} to ${max}`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `must be an integer from ${min} to ${max}`);
}

const baseUrl = z
  .string()
  .url('must be an absolute http(s) URL')
  .refine((u) => /^https?:\/\//i.test(u), 'must be an absolute http(s) URL')
  .transform((u) => u.replace(/\/+$/, ''));

const secret = z
  .string()
  .refine((s) => decodeSecret(s) !== null, 'must be at least 32 bytes, given as hex or base64');

const retrySchedule = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'must be a comma-separated list of delays in milliseconds')
  .transform((s) => s.split(',').map(Number));

const envSchema = z.object({
  PORT: intIn(0, 65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  DATABASE_PATH: z.string().min(1).default('data/connector.db'),
  DATASET: z.string().min(1).optional(),
  DEVICE_API_URL: baseUrl.optional(),
  MENU_API_URL: baseUrl.optional(),
  UPSTREAM_TIMEOUT_MS: intIn(1, 600_000).default(5000),
  UPSTREAM_RETRIES: intIn(0, 10).default(2),
  OPTIONS_CACHE_TTL_MS: intIn(0, 86_400_000).default(30_000),
  DEVICE_CACHE_TTL_MS: intIn(0, 86_400_000).default(10_000),
  HEARTBEAT_TIMEOUT_MS: intIn(1, 30 * 86_400_000).default(300_000),
  POLL_INTERVAL_MS: intIn(200, 86_400_000).default(30_000),
  WEBHOOK_TIMEOUT_MS: intIn(1, 600_000).default(10_000),
  WEBHOOK_RETRY_SCHEDULE_MS: retrySchedule.default([5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000]),
  WEBHOOK_ALLOW_PRIVATE_TARGETS: boolFlag.default(false),
  CONNECTOR_SECRET: secret.optional(),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      message: 'must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  LOG_FORMAT: z.enum(['auto', 'pretty', 'json'], { message: 'must be one of auto, pretty, json' }).default('auto'),
  PUBLIC_URL: baseUrl.optional(),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// URL')
    .optional(),
  DATABASE_POOL_SIZE: intIn(1, 1000).default(10),
  DATABASE_TIMEOUT_MS: intIn(100, 600_000).default(5000),
  WEBHOOK_TARGET_CONCURRENCY: intIn(1, 1000).default(8),
  WEBHOOK_MAX_HOOKS_PER_KEY: intIn(1, 1_000_000).default(1000),
  METRICS_TOKEN: z.string().min(1).optional(),
});

export type Config = z.infer<typeof envSchema>;

export class ConfigError extends Error {}

/** Parses the environment; throws ConfigError with one line per the first problem found. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const relevant: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    // An empty variable means "unset", as shells and .env files commonly produce them.
    if (value !== undefined && value !== '') relevant[key] = value;
  }
  const parsed = envSchema
    .refine((c) => !c.DATABASE_URL || c.CONNECTOR_SECRET, {
      path: ['CONNECTOR_SECRET'],
      message: 'must be set when DATABASE_URL is: every replica must seal and open secrets with the same one',
    })
    .safeParse(relevant);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0] ?? 'environment');
    // JSON-quoted so a value with a newline cannot break the promised single line.
    const shown = relevant[name] === undefined || name === 'CONNECTOR_SECRET' || name === 'DATABASE_URL' ? '' : ` (got ${JSON.stringify(relevant[name])})`;
    throw new ConfigError(`Invalid configuration: ${name} ${issue.message}${shown}`);
  }
  return parsed.data;
}

/** Decodes a hex or base64 secret of at least 32 bytes; null when it is neither. */
export function decodeSecret(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]+$/.test(trimmed) && trimmed.length % 2 === 0) {
    const bytes = Buffer.from(trimmed, 'hex');
    return bytes.length >= 32 ? bytes : null;
  }
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed, 'base64');
    return bytes.length >= 32 ? bytes : null;
  }
  return null;
}

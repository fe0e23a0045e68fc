import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';

/**
 * The only reader of `process.env` (docs/configuration.md). Every variable is parsed once at
 * start; invalid values stop the process with one line for each invalid variable, all of them
 * at once.
 */
const boolFlag = z.enum(['true', 'false', '1', '0'], { message: 'must be true or false' }).transform((v) => v === 'true' || v === '1');

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

const secret = z.string().refine((s) => decodeSecret(s) !== null, 'must be at least 32 bytes, given as hex or base64');

const retrySchedule = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'must be a comma-separated list of delays in milliseconds')
  .transform((s) => s.split(',').map(Number));

/** An address range: its network address and prefix length. */
export type AddressRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** `WEBHOOK_ALLOWED_TARGETS`: webhook targets allowed although `http://` or private. */
export interface AllowedTargets {
  /** Exact origins (`URL.origin`: scheme, host and port), http or https. */
  origins: string[];
  /** Address ranges: any http(s) target whose resolved addresses all fall in one. */
  ranges: AddressRange[];
}

/** `10.0.0.0/8`, `fd00::/8`: an IPv4 or IPv6 address in its standard form and a prefix length. */
function parseRange(entry: string): AddressRange | null {
  const slash = entry.lastIndexOf('/');
  // net.isIP first: ipaddr.js also takes legacy IPv4 forms (`10.1`) that would surprise.
  if (slash < 0 || isIP(entry.slice(0, slash)) === 0 || !/^\d{1,3}$/.test(entry.slice(slash + 1))) return null;
  try {
    return ipaddr.parseCIDR(entry);
  } catch {
    return null;
  }
}

/** `http://n8n.internal:5678`: an http(s) origin, nothing after the port but an optional `/`. */
function parseOrigin(entry: string): string | null {
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    return null;
  }
  const bare = !url.username && !url.password && url.pathname === '/' && !url.search && !url.hash && !/[?#]/.test(entry);
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname && bare ? url.origin : null;
}

const allowedTargets = z.string().transform((text, ctx): AllowedTargets => {
  const targets: AllowedTargets = { origins: [], ranges: [] };
  const invalid: string[] = [];
  // Blank entries (a trailing comma) are skipped.
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const range = parseRange(entry);
    const origin = range ? null : parseOrigin(entry);
    if (range) targets.ranges.push(range);
    else if (origin) targets.origins.push(origin);
    else invalid.push(JSON.stringify(entry));
  }
  if (invalid.length > 0) {
    const which = invalid.length === 1 ? `${invalid[0]} is neither` : `${invalid.join(', ')} are neither`;
    ctx.addIssue({ code: 'custom', message: `must list origins such as http://n8n.internal:5678 or CIDR ranges such as 10.0.0.0/8; ${which}` });
  }
  return targets;
});

/**
 * `TRUST_PROXY`: the proxies in front, as Express's `trust proxy` setting takes them: a hop
 * count (the nearest N addresses of X-Forwarded-For are proxies) or the proxies' addresses and
 * CIDR ranges. `true` (trust every hop) is refused: any client could then name its own address.
 */
export type TrustProxy = number | string[];

const trustProxy = z.string().transform((text, ctx): TrustProxy => {
  const problem = 'must be a hop count from 1 to 100 (1 = one proxy in front) or comma-separated proxy addresses or CIDR ranges such as 10.0.0.0/8';
  if (/^\d+$/.test(text.trim())) {
    const hops = Number(text.trim());
    if (hops >= 1 && hops <= 100) return hops;
    ctx.addIssue({ code: 'custom', message: problem });
    return 0;
  }
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  const invalid = entries.filter((entry) => isIP(entry) === 0 && parseRange(entry) === null);
  if (entries.length === 0 || invalid.length > 0) {
    const which = invalid.length === 0 ? '' : `; ${invalid.map((e) => JSON.stringify(e)).join(', ')} ${invalid.length === 1 ? 'is' : 'are'} neither`;
    ctx.addIssue({ code: 'custom', message: `${problem}${which}` });
  }
  return entries;
});

const envSchema = z.object({
  PORT: intIn(0, 65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  TRUST_PROXY: trustProxy.optional(),
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
  WEBHOOK_ALLOWED_TARGETS: allowedTargets.optional(),
  CONNECTOR_SECRET: secret.optional(),
  CONNECTOR_SECRET_PREVIOUS: secret.optional(),
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
  WEBHOOK_SECRET_OVERLAP_MS: intIn(0, 30 * 86_400_000).default(86_400_000),
  METRICS_TOKEN: z.string().min(1).optional(),
  RATE_LIMIT_PER_MINUTE: intIn(0, 10_000_000).default(1200),
  ADMIN_TOKEN: z
    .string()
    .min(32, 'must be at least 32 characters (openssl rand -hex 32)')
    .regex(/^[\x21-\x7E]+$/, 'must be printable ASCII without spaces')
    .optional(),
});

export type Config = z.infer<typeof envSchema>;

export class ConfigError extends Error {}

/** Values that are never echoed back in an error line. */
const secretVariables = new Set(['CONNECTOR_SECRET', 'CONNECTOR_SECRET_PREVIOUS', 'DATABASE_URL', 'METRICS_TOKEN', 'ADMIN_TOKEN']);

/**
 * Parses the environment. Throws ConfigError whose message has one line for each invalid
 * variable (its first problem), in the order of the configuration table.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const relevant: Record<string, string> = {};
  for (const key of Object.keys(envSchema.shape)) {
    const value = env[key];
    // An empty variable means "unset", as shells and .env files commonly produce them.
    if (value !== undefined && value !== '') relevant[key] = value;
  }
  const parsed = envSchema.safeParse(relevant);
  const problems = new Map<string, string>();
  for (const issue of parsed.error?.issues ?? []) {
    const name = String(issue.path[0] ?? 'environment');
    if (!problems.has(name)) problems.set(name, issue.message);
  }
  // Checked beside the others, not after them: a rule between two variables is one more line.
  if (relevant.DATABASE_URL !== undefined && relevant.CONNECTOR_SECRET === undefined) {
    problems.set('CONNECTOR_SECRET', 'must be set when DATABASE_URL is: every replica must seal and open secrets with the same one');
  }
  // A rotation (docs/deploy.md) names the new secret as well as the old one.
  if (relevant.CONNECTOR_SECRET_PREVIOUS !== undefined && relevant.CONNECTOR_SECRET === undefined) {
    problems.set('CONNECTOR_SECRET', 'must be set when CONNECTOR_SECRET_PREVIOUS is: it is the new secret that stored secrets are re-sealed with');
  }
  if (problems.size > 0 || !parsed.success) {
    const order = Object.keys(envSchema.shape);
    const sorted = [...problems].sort(([a], [b]) => order.indexOf(a) - order.indexOf(b));
    const lines = sorted.map(([name, message]) => {
      // JSON-quoted so a value with a newline cannot break its line.
      const shown = relevant[name] === undefined || secretVariables.has(name) ? '' : ` (got ${JSON.stringify(relevant[name])})`;
      return `Invalid configuration: ${name} ${message}${shown}`;
    });
    throw new ConfigError(lines.join('\n'));
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

import { describe, expect, test } from '@jest/globals';
import { ConfigError, decodeSecret, loadConfig } from '../../src/config.js';

/** Runs loadConfig and returns the ConfigError it throws (fails the test if it does not). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`loadConfig(${JSON.stringify(env)}) did not throw`);
}

const hexSecret = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

describe('defaults (docs/configuration.md)', () => {
  test('an empty environment gives exactly the documented defaults', () => {
    expect(loadConfig({})).toEqual({
      PORT: 3000,
      HOST: '0.0.0.0',
      DATABASE_PATH: 'data/connector.db',
      DATABASE_POOL_SIZE: 10,
      DATABASE_TIMEOUT_MS: 5000,
      UPSTREAM_TIMEOUT_MS: 5000,
      UPSTREAM_RETRIES: 2,
      OPTIONS_CACHE_TTL_MS: 30000,
      DEVICE_CACHE_TTL_MS: 10000,
      HEARTBEAT_TIMEOUT_MS: 300000,
      POLL_INTERVAL_MS: 30000,
      WEBHOOK_TIMEOUT_MS: 10000,
      WEBHOOK_RETRY_SCHEDULE_MS: [5000, 300000, 1800000, 7200000, 18000000, 36000000, 36000000],
      WEBHOOK_ALLOW_PRIVATE_TARGETS: false,
      WEBHOOK_TARGET_CONCURRENCY: 8,
      WEBHOOK_MAX_HOOKS_PER_KEY: 1000,
      WEBHOOK_SECRET_OVERLAP_MS: 86400000,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'auto',
      RATE_LIMIT_PER_MINUTE: 1200,
    });
  });

  test('RATE_LIMIT_PER_MINUTE takes 0 (off) to 10000000; ADMIN_TOKEN needs 32 printable characters and is never echoed', () => {
    expect(loadConfig({ RATE_LIMIT_PER_MINUTE: '0' }).RATE_LIMIT_PER_MINUTE).toBe(0);
    expect(loadConfig({ ADMIN_TOKEN: 'x'.repeat(32) }).ADMIN_TOKEN).toBe('x'.repeat(32));
    expect(() => loadConfig({ RATE_LIMIT_PER_MINUTE: '-1' })).toThrow(
      'Invalid configuration: RATE_LIMIT_PER_MINUTE must be an integer from 0 to 10000000 (got "-1")',
    );
    const short = 'too-short-admin-token';
    expect(() => loadConfig({ ADMIN_TOKEN: short })).toThrow(/^Invalid configuration: ADMIN_TOKEN must be at least 32 characters \(openssl rand -hex 32\)$/);
    expect(() => loadConfig({ ADMIN_TOKEN: `${'x'.repeat(32)} y` })).toThrow('ADMIN_TOKEN must be printable ASCII without spaces');
  });

  test('optional variables are unset by default', () => {
    const config = loadConfig({});
    for (const name of ['DATASET', 'DEVICE_API_URL', 'MENU_API_URL', 'CONNECTOR_SECRET', 'PUBLIC_URL', 'DATABASE_URL'] as const) {
      expect(config[name]).toBeUndefined();
    }
  });

  test('unrelated variables are ignored', () => {
    expect(loadConfig({ PATH: '/usr/bin', HOME: '/root', NODE_ENV: 'test' }).PORT).toBe(3000);
  });
});

describe('valid values', () => {
  test('every variable is parsed to its type', () => {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      DATABASE_PATH: '/tmp/x.db',
      DATASET: 'data.json',
      DEVICE_API_URL: 'https://devices.example.com',
      MENU_API_URL: 'http://menus.example.com:8080/api',
      UPSTREAM_TIMEOUT_MS: '1500',
      UPSTREAM_RETRIES: '0',
      OPTIONS_CACHE_TTL_MS: '0',
      DEVICE_CACHE_TTL_MS: '250',
      HEARTBEAT_TIMEOUT_MS: '60000',
      POLL_INTERVAL_MS: '200',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_RETRY_SCHEDULE_MS: '10,20,30',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      CONNECTOR_SECRET: hexSecret,
      LOG_LEVEL: 'debug',
      PUBLIC_URL: 'https://connector.example.com',
    });
    expect(config).toMatchObject({
      PORT: 0,
      HOST: '127.0.0.1',
      DATABASE_PATH: '/tmp/x.db',
      DATASET: 'data.json',
      DEVICE_API_URL: 'https://devices.example.com',
      MENU_API_URL: 'http://menus.example.com:8080/api',
      UPSTREAM_TIMEOUT_MS: 1500,
      UPSTREAM_RETRIES: 0,
      OPTIONS_CACHE_TTL_MS: 0,
      DEVICE_CACHE_TTL_MS: 250,
      HEARTBEAT_TIMEOUT_MS: 60000,
      POLL_INTERVAL_MS: 200,
      WEBHOOK_TIMEOUT_MS: 2000,
      WEBHOOK_RETRY_SCHEDULE_MS: [10, 20, 30],
      WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
      CONNECTOR_SECRET: hexSecret,
      LOG_LEVEL: 'debug',
      PUBLIC_URL: 'https://connector.example.com',
    });
  });

  test('PORT bounds 0 and 65535 are accepted', () => {
    expect(loadConfig({ PORT: '0' }).PORT).toBe(0);
    expect(loadConfig({ PORT: '65535' }).PORT).toBe(65535);
  });

  test.each([
    ['true', true],
    ['false', false],
    ['1', true],
    ['0', false],
  ])('WEBHOOK_ALLOW_PRIVATE_TARGETS=%s', (value, expected) => {
    expect(loadConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: value }).WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(expected);
  });

  test.each(['auto', 'pretty', 'json'] as const)('LOG_FORMAT=%s', (value) => {
    expect(loadConfig({ LOG_FORMAT: value }).LOG_FORMAT).toBe(value);
  });

  test.each(['DEVICE_API_URL', 'MENU_API_URL', 'PUBLIC_URL'] as const)('a trailing slash is stripped from %s', (name) => {
    expect(loadConfig({ [name]: 'https://up.example.com/' })[name]).toBe('https://up.example.com');
    expect(loadConfig({ [name]: 'https://up.example.com/api//' })[name]).toBe('https://up.example.com/api');
    expect(loadConfig({ [name]: 'http://localhost:4000' })[name]).toBe('http://localhost:4000');
  });

  test('an empty string means unset', () => {
    const env: Record<string, string> = {};
    for (const name of [
      'PORT',
      'HOST',
      'DATABASE_PATH',
      'DATASET',
      'DEVICE_API_URL',
      'MENU_API_URL',
      'UPSTREAM_TIMEOUT_MS',
      'UPSTREAM_RETRIES',
      'OPTIONS_CACHE_TTL_MS',
      'DEVICE_CACHE_TTL_MS',
      'HEARTBEAT_TIMEOUT_MS',
      'POLL_INTERVAL_MS',
      'WEBHOOK_TIMEOUT_MS',
      'WEBHOOK_RETRY_SCHEDULE_MS',
      'WEBHOOK_ALLOW_PRIVATE_TARGETS',
      'CONNECTOR_SECRET',
      'LOG_LEVEL',
      'LOG_FORMAT',
      'PUBLIC_URL',
    ]) {
      env[name] = '';
    }
    expect(loadConfig(env)).toEqual(loadConfig({}));
  });

  test('CONNECTOR_SECRET is accepted as hex or base64 of 32+ bytes', () => {
    const base64 = Buffer.alloc(32, 7).toString('base64');
    const base64url = Buffer.alloc(48, 250).toString('base64url');
    expect(loadConfig({ CONNECTOR_SECRET: base64 }).CONNECTOR_SECRET).toBe(base64);
    expect(loadConfig({ CONNECTOR_SECRET: base64url }).CONNECTOR_SECRET).toBe(base64url);
    expect(decodeSecret(hexSecret)).toEqual(Buffer.from(hexSecret, 'hex'));
    expect(decodeSecret(base64)).toEqual(Buffer.alloc(32, 7));
    expect(decodeSecret('abcd')).toBeNull();
    expect(decodeSecret('not a secret at all, has spaces!!')).toBeNull();
    expect(decodeSecret(Buffer.alloc(31, 1).toString('hex'))).toBeNull();
  });
});

describe('invalid values stop with one line naming the variable', () => {
  test.each([
    ['PORT', 'abc', /PORT must be an integer from 0 to 65535/],
    ['PORT', '70000', /PORT must be an integer from 0 to 65535/],
    ['PORT', '-1', /PORT/],
    ['PORT', '3.5', /PORT/],
    ['PORT', '80\n', /PORT/],
    ['POLL_INTERVAL_MS', '100', /POLL_INTERVAL_MS must be an integer from 200 to/],
    ['POLL_INTERVAL_MS', '199', /POLL_INTERVAL_MS/],
    ['UPSTREAM_TIMEOUT_MS', '0', /UPSTREAM_TIMEOUT_MS/],
    ['UPSTREAM_RETRIES', 'two', /UPSTREAM_RETRIES/],
    ['HEARTBEAT_TIMEOUT_MS', '5m', /HEARTBEAT_TIMEOUT_MS/],
    ['DEVICE_API_URL', 'not-a-url', /DEVICE_API_URL must be an absolute http\(s\) URL/],
    ['DEVICE_API_URL', 'ftp://files.example.com', /DEVICE_API_URL/],
    ['MENU_API_URL', 'menus.example.com', /MENU_API_URL/],
    ['PUBLIC_URL', '/relative/path', /PUBLIC_URL/],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '5s', /WEBHOOK_RETRY_SCHEDULE_MS must be a comma-separated list/],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '5000,,6000', /WEBHOOK_RETRY_SCHEDULE_MS/],
    ['WEBHOOK_RETRY_SCHEDULE_MS', '5000, 6000', /WEBHOOK_RETRY_SCHEDULE_MS/],
    ['LOG_LEVEL', 'loud', /LOG_LEVEL must be one of .*info/],
    ['LOG_FORMAT', 'text', /LOG_FORMAT must be one of auto, pretty, json/],
    ['LOG_FORMAT', 'JSON', /LOG_FORMAT must be one of auto, pretty, json/],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'maybe', /WEBHOOK_ALLOW_PRIVATE_TARGETS must be true or false/],
    ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'yes', /WEBHOOK_ALLOW_PRIVATE_TARGETS/],
    ['TRUST_PROXY', 'true', /TRUST_PROXY must be a hop count from 1 to 100 .* or comma-separated proxy addresses or CIDR ranges/],
    ['TRUST_PROXY', '0', /TRUST_PROXY must be a hop count from 1 to 100/],
    ['TRUST_PROXY', '10.0.0.0/8,proxy.internal', /TRUST_PROXY must be .*; "proxy.internal" is neither/],
    ['TRUST_PROXY', '10.0.0.0/33', /TRUST_PROXY must be .*; "10.0.0.0\/33" is neither/],
  ])('%s=%j', (name, value, pattern) => {
    const err = configError({ [name]: value });
    expect(err.message).toMatch(pattern);
    expect(err.message).toMatch(new RegExp(`^Invalid configuration: ${name} `));
    expect(err.message).not.toContain('\n');
    // The offending value is shown, quoted, so the operator sees what was read.
    expect(err.message).toContain(JSON.stringify(value));
  });

  test.each([
    ['too short hex', 'abcdef0123456789'],
    ['31 bytes of hex', Buffer.alloc(31, 0xab).toString('hex')],
    ['too short base64', Buffer.from('sixteen byte key').toString('base64')],
    ['neither hex nor base64', 'this is not hex or base64 but it is long enough!'],
  ])('CONNECTOR_SECRET %s: named, and the secret itself is not echoed', (_why, value) => {
    const err = configError({ CONNECTOR_SECRET: value });
    expect(err.message).toMatch(/^Invalid configuration: CONNECTOR_SECRET must be at least 32 bytes/);
    expect(err.message).not.toContain('\n');
    expect(err.message).not.toContain(value);
    expect(err.message).not.toContain(value.slice(0, 8));
  });

  test("TRUST_PROXY takes a hop count or proxy addresses and CIDR ranges, as Express's `trust proxy` does", () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).TRUST_PROXY).toBe(1);
    expect(loadConfig({ TRUST_PROXY: ' 10.0.0.0/8, 192.0.2.7 ,fd00::/8' }).TRUST_PROXY).toEqual(['10.0.0.0/8', '192.0.2.7', 'fd00::/8']);
    expect(loadConfig({}).TRUST_PROXY).toBeUndefined();
  });

  test('every invalid variable is reported, one line each, in the order of the table', () => {
    const err = configError({ LOG_LEVEL: 'loud', PORT: 'abc', POLL_INTERVAL_MS: '5' });
    expect(err.message.split('\n')).toEqual([
      'Invalid configuration: PORT must be an integer from 0 to 65535 (got "abc")',
      'Invalid configuration: POLL_INTERVAL_MS must be an integer from 200 to 86400000 (got "5")',
      'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")',
    ]);
  });

  test('a valid variable next to an invalid one does not hide the error', () => {
    expect(configError({ PORT: '8080', POLL_INTERVAL_MS: '100' }).message).toMatch(/POLL_INTERVAL_MS/);
  });
});

describe('WEBHOOK_ALLOWED_TARGETS', () => {
  test('origins are kept as URL origins, ranges as address and prefix', () => {
    const targets = loadConfig({
      WEBHOOK_ALLOWED_TARGETS: ' http://N8N.internal:5678/ ,https://pieces.internal:443,10.0.0.0/8,fd00::/8,',
    }).WEBHOOK_ALLOWED_TARGETS!;
    expect(targets.origins).toEqual(['http://n8n.internal:5678', 'https://pieces.internal']);
    expect(targets.ranges.map(([address, bits]) => `${address.toString()}/${bits}`)).toEqual(['10.0.0.0/8', 'fd00::/8']);
  });

  test('several bad entries are named in its one line', () => {
    expect(configError({ WEBHOOK_ALLOWED_TARGETS: 'n8n.internal,10.0.0.0/8,10.1/16' }).message).toBe(
      'Invalid configuration: WEBHOOK_ALLOWED_TARGETS must list origins such as http://n8n.internal:5678 or CIDR ranges such as 10.0.0.0/8; "n8n.internal", "10.1/16" are neither (got "n8n.internal,10.0.0.0/8,10.1/16")',
    );
  });
});

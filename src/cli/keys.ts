import { parseArgs } from 'node:util';
import { type z } from 'zod';
import type { KeyStore, KeyView } from '../auth/key-store.js';
import type * as KeyInputModule from '../auth/key-input.js';
import { fail } from './fail.js';

type KeyInput = typeof KeyInputModule;

const usage = `Usage:
  npm run keys -- create --user <user id> --scopes device:read,menu:read,hooks:write [--name <label>] [--expires <time>] [--rate-limit <per minute>]
  npm run keys -- list [--user <user id>] [--account <account id>]
  npm run keys -- revoke <key id>
  npm run keys -- roll <key id> [--grace <seconds, default 86400>]
<time> is ISO 8601 with a zone (2027-01-01T00:00:00Z) or relative (now+30d).`;

/**
 * Key management for embedded mode (docs/keys.md), through the same store and checks as the
 * operator API. A new key is printed once, on the last line; nothing else ever prints a key.
 */
async function run(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: {
        user: { type: 'string' },
        account: { type: 'string' },
        scopes: { type: 'string' },
        name: { type: 'string' },
        expires: { type: 'string' },
        'rate-limit': { type: 'string' },
        grace: { type: 'string' },
      },
      allowPositionals: true,
    });
  } catch (err) {
    fail(`${(err as Error).message}\n${usage}`);
  }
  const [command, ...rest] = parsed.positionals;
  const { values } = parsed;
  const known = ['create', 'list'].includes(command ?? '') ? rest.length === 0 : ['revoke', 'roll'].includes(command ?? '') && rest.length === 1;
  if (!known) fail(usage);
  // Loaded once the command is known: a usage error is printed without the store and database modules.
  const [{ KeyStore }, input, { AppError }, { systemClock }, { cliContext }] = await Promise.all([
    import('../auth/key-store.js'),
    import('../auth/key-input.js'),
    import('../errors.js'),
    import('../time/timestamps.js'),
    import('./context.js'),
  ]);
  const { config, db } = await cliContext();
  if (config.DEVICE_API_URL || config.MENU_API_URL) {
    await db.close();
    fail('Keys belong to the upstream in upstream mode (DEVICE_API_URL or MENU_API_URL is set): manage them there');
  }
  const store = new KeyStore(db, systemClock);
  try {
    if (command === 'create') await create(store, values, input);
    else if (command === 'list') await list(store, values.user, values.account);
    else if (command === 'revoke') {
      const revoked = await store.revoke(rest[0]!);
      console.log(`Revoked key ${revoked.id}.`);
    } else {
      const grace = values.grace === undefined ? 86_400 : check(input.graceSeconds, /^\d+$/.test(values.grace) ? Number(values.grace) : NaN, '--grace');
      const rolled = await store.roll(rest[0]!, grace);
      console.log(
        `Rolled key ${rest[0]} into ${rolled.view.id}; the old key ${rolled.previous.expires_at ? `expires at ${rolled.previous.expires_at}` : 'keeps working'}.`,
      );
      console.log('The new key is shown only now; store it safely:');
      console.log(rolled.key);
    }
  } catch (err) {
    if (err instanceof AppError && (err.code === 'not_found' || err.code === 'validation' || err.code === 'conflict')) {
      fail(err.code === 'not_found' ? `Unknown key "${rest[0]}"` : err.message);
    }
    throw err;
  } finally {
    await db.close();
  }
}

/** A value checked with the operator API's own schema; a problem exits 1 naming the option. */
function check<T>(schema: z.ZodType<T>, value: unknown, option: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) fail(`${option}: ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

async function create(store: KeyStore, values: Record<string, string | undefined>, { expiryOf, keyFields }: KeyInput): Promise<void> {
  if (!values.user || !values.scopes) fail(usage);
  const scopes = [
    ...new Set(
      values.scopes
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  const bad = scopes.filter((s) => !keyFields.scopes.element.safeParse(s).success);
  if (scopes.length === 0 || bad.length > 0) {
    fail(`Unknown scope(s): ${bad.join(', ') || '(none given)'}; use ${keyFields.scopes.element.options.join(', ')}`);
  }
  const rate = values['rate-limit'];
  const input = {
    user_id: values.user,
    scopes,
    name: check(keyFields.name, values.name ?? 'Created with npm run keys', '--name'),
    expires_at: expiryOf(values.expires === undefined ? undefined : check(keyFields.expires_at, values.expires, '--expires'), Date.now()),
    rate_limit_per_minute: rate === undefined ? null : check(keyFields.rate_limit_per_minute, /^\d+$/.test(rate) ? Number(rate) : NaN, '--rate-limit'),
  };
  const { key, view } = await store.create(input);
  console.log(`Created key ${view.id} for user ${view.user_id} with scopes ${view.scopes.join(', ')}.`);
  if (view.expires_at) console.log(`It expires at ${view.expires_at}.`);
  if (view.rate_limit_per_minute) console.log(`Its rate limit is ${view.rate_limit_per_minute} requests a minute.`);
  console.log('The key is shown only now; store it safely:');
  console.log(key);
}

/** One line per key, tab-separated: id, user, scopes, name, prefix, status, expires, last used, own limit. */
async function list(store: KeyStore, userId?: string, accountId?: string): Promise<void> {
  const shown: KeyView[] = [];
  for (let after: string | undefined; ;) {
    const page = await store.page({ userId, accountId }, { limit: 500, after });
    shown.push(...page.items);
    if (page.next === null) break;
    after = page.next;
  }
  for (const k of shown) {
    console.log(
      [k.id, k.user_id, k.scopes.join(','), k.name, k.prefix ?? '-', k.status, k.expires_at ?? '-', k.last_used_at ?? '-', k.rate_limit_per_minute ?? '-'].join(
        '\t',
      ),
    );
  }
  if (shown.length === 0) console.log('No keys.');
}

await run();

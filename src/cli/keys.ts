import { parseArgs } from 'node:util';
import { generateKey, hashKey } from '../auth/keys.js';
import { scopeSchema } from '../dataset/schema.js';
import { formatMicros } from '../time/timestamps.js';
import { randomUUID } from 'node:crypto';
import { cliContext, fail } from './context.js';

const usage = `Usage:
  npm run keys -- create --user <user id> --scopes device:read,menu:read,hooks:write [--name <label>]
  npm run keys -- list [--user <user id>]
  npm run keys -- revoke <key id>`;

/** Key management for embedded mode. A new key is printed once; only its SHA-256 is stored. */
async function run(): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      options: { user: { type: 'string' }, scopes: { type: 'string' }, name: { type: 'string' } },
      allowPositionals: true,
    });
  } catch (err) {
    fail(`${(err as Error).message}\n${usage}`);
  }
  const [command, ...rest] = parsed.positionals;
  const { values } = parsed;
  const { db } = await cliContext();
  try {
    if (command === 'create') {
      if (!values.user || !values.scopes) fail(usage);
      const scopes = values.scopes.split(',').map((s) => s.trim()).filter(Boolean);
      const bad = scopes.filter((s) => !scopeSchema.safeParse(s).success);
      if (scopes.length === 0 || bad.length > 0) {
        fail(`Unknown scope(s): ${bad.join(', ') || '(none given)'}; use ${scopeSchema.options.join(', ')}`);
      }
      const user = await db.kysely.selectFrom('users').select('id').where('id', '=', values.user).executeTakeFirst();
      if (!user) fail(`Unknown user "${values.user}"`);
      const key = generateKey();
      const id = `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
      await db.kysely
        .insertInto('api_keys')
        .values({
          id,
          user_id: values.user,
          name: values.name ?? 'Created with npm run keys',
          key_sha256: hashKey(key),
          scopes: JSON.stringify([...new Set(scopes)]),
          created_at: formatMicros(Date.now() * 1000),
        })
        .execute();
      console.log(`Created key ${id} for user ${values.user} with scopes ${scopes.join(', ')}.`);
      console.log('The key is shown only now; store it safely:');
      console.log(key);
    } else if (command === 'list') {
      const rows = await db.kysely
        .selectFrom('api_keys')
        .select(['id', 'user_id', 'name', 'scopes', 'created_at'])
        .$if(values.user !== undefined, (q) => q.where('user_id', '=', values.user!))
        .orderBy('user_id')
        .orderBy('id')
        .execute();
      for (const row of rows) console.log(`${row.id}\t${row.user_id}\t${JSON.parse(row.scopes!).join(',')}\t${row.name}`);
      if (rows.length === 0) console.log('No keys.');
    } else if (command === 'revoke' && rest.length === 1) {
      const { numDeletedRows } = await db.kysely.deleteFrom('api_keys').where('id', '=', rest[0]!).executeTakeFirst();
      if (Number(numDeletedRows) === 0) fail(`Unknown key "${rest[0]}"`);
      console.log(`Revoked key ${rest[0]}.`);
    } else {
      fail(usage);
    }
  } finally {
    await db.close();
  }
}

await run();

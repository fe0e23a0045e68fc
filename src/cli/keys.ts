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
function run(): void {
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
  const { db } = cliContext();
  try {
    if (command === 'create') {
      if (!values.user || !values.scopes) fail(usage);
      const scopes = values.scopes.split(',').map((s) => s.trim()).filter(Boolean);
      const bad = scopes.filter((s) => !scopeSchema.safeParse(s).success);
      if (scopes.length === 0 || bad.length > 0) {
        fail(`Unknown scope(s): ${bad.join(', ') || '(none given)'}; use ${scopeSchema.options.join(', ')}`);
      }
      if (!db.prepare('SELECT 1 FROM users WHERE id = ?').get(values.user)) fail(`Unknown user "${values.user}"`);
      const key = generateKey();
      const id = `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
      db.prepare('INSERT INTO api_keys (id, user_id, name, key_sha256, scopes, created_at) VALUES (?, ?, ?, ?, ?, ?)').run(
        id, values.user, values.name ?? 'Created with npm run keys', hashKey(key), JSON.stringify([...new Set(scopes)]),
        formatMicros(Date.now() * 1000),
      );
      console.log(`Created key ${id} for user ${values.user} with scopes ${scopes.join(', ')}.`);
      console.log('The key is shown only now; store it safely:');
      console.log(key);
    } else if (command === 'list') {
      const rows = db
        .prepare('SELECT id, user_id, name, scopes, created_at FROM api_keys WHERE ? IS NULL OR user_id = ? ORDER BY user_id, id')
        .all(values.user ?? null, values.user ?? null) as Array<Record<string, string>>;
      for (const row of rows) console.log(`${row.id}\t${row.user_id}\t${JSON.parse(row.scopes!).join(',')}\t${row.name}`);
      if (rows.length === 0) console.log('No keys.');
    } else if (command === 'revoke' && rest.length === 1) {
      const { changes } = db.prepare('DELETE FROM api_keys WHERE id = ?').run(rest[0]);
      if (changes === 0) fail(`Unknown key "${rest[0]}"`);
      console.log(`Revoked key ${rest[0]}.`);
    } else {
      fail(usage);
    }
  } finally {
    db.close();
  }
}

run();

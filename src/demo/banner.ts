import type { Db } from '../db/database.js';
import { hashKey } from '../auth/keys.js';
import { keyByHash } from '../auth/embedded-keys.js';

/** The demo dataset's all-scopes key; public on purpose, like any sandbox key. */
export const demoKey = 'sk_demo_harbor_ana_all_0123456789';

/**
 * The start-up text a newcomer sees when the demo catalog is loaded: the demo key and curl
 * commands that work against it. Empty when the demo key is not in the catalog.
 */
export async function demoBanner(db: Db, baseUrl: string): Promise<string> {
  const owner = await keyByHash(db, hashKey(demoKey));
  if (!owner) return '';
  const menu = (
    await db.kysely.selectFrom('menus').select('id').where('account_id', '=', owner.account_id).orderBy('position').limit(1).executeTakeFirst()
  )?.id;
  const lines = [
    '',
    `Demo catalog loaded. Demo key (all scopes, Ana at Harbor Street Diner): ${demoKey}`,
    'Try:',
    `  curl -s -H 'Authorization: Bearer ${demoKey}' '${baseUrl}/devices?is_online=false&page_size=5'`,
    `  curl -s -H 'X-API-Key: ${demoKey}' ${baseUrl}/v1/menus`,
    `  curl -s -H 'X-API-Key: ${demoKey}' '${baseUrl}/v1/groups?tags=daypart:*'`,
    `  curl -s -H 'X-API-Key: ${demoKey}' ${baseUrl}/v1/me`,
  ];
  if (typeof menu === 'string') lines.push(`  curl -s -H 'X-API-Key: ${demoKey}' '${baseUrl}/v1/groups?menus=${menu}'`);
  lines.push('More in README.md. Stop with Ctrl+C.', '');
  return lines.join('\n');
}

import type { Db } from '../db/database.js';
import { hashKey } from '../auth/keys.js';
import { keyByHash } from '../auth/embedded-keys.js';
import { formatMicros } from '../time/timestamps.js';

/** The demo dataset's all-scopes key; public on purpose, like any sandbox key. */
export const demoKey = 'sk_demo_harbor_ana_all_0123456789';

export interface BannerContext {
  baseUrl: string;
  /** The catalog is the bundled demo, imported at this start (see bootstrapCatalog). */
  demoLoaded: boolean;
  nowMs: number;
  heartbeatTimeoutMs: number;
  /** Something keeps the online screens beating (`npm run demo`). */
  heartbeatsSimulated?: boolean;
}

/**
 * The start-up text a newcomer sees when the catalog has the demo key: the key, how many of its
 * screens are online right now (and why that will change), and curl commands that work against
 * it. Empty when the demo key is not in the catalog. It says "Demo catalog loaded" only when the
 * demo was imported at this start; a catalog changed since is served as stored, and said so.
 */
export async function demoBanner(db: Db, context: BannerContext): Promise<string> {
  const { baseUrl } = context;
  const owner = await keyByHash(db, hashKey(demoKey));
  if (!owner) return '';
  const menu = (await db.kysely.selectFrom('menus').select('id').where('account_id', '=', owner.account_id).orderBy('position').limit(1).executeTakeFirst())
    ?.id;
  const screens = await screenCounts(db, owner.user_id, formatMicros((context.nowMs - context.heartbeatTimeoutMs) * 1000));
  const lines = [
    '',
    `${context.demoLoaded ? 'Demo catalog loaded. ' : ''}Demo key (all scopes, Ana at Harbor Street Diner): ${demoKey}`,
    ...screenStory(context, screens),
    'Try:',
    `  curl -s -H 'Authorization: Bearer ${demoKey}' '${baseUrl}/devices?is_online=false&page_size=5'`,
    `  curl -s -H 'X-API-Key: ${demoKey}' ${baseUrl}/v1/menus`,
    `  curl -s -H 'X-API-Key: ${demoKey}' '${baseUrl}/v1/groups?tags=daypart:*'`,
    `  curl -s -H 'X-API-Key: ${demoKey}' ${baseUrl}/v1/me`,
  ];
  if (typeof menu === 'string') lines.push(`  curl -s -H 'X-API-Key: ${demoKey}' '${baseUrl}/v1/groups?menus=${menu}'`);
  lines.push(`  curl -s -H 'X-API-Key: ${demoKey}' ${baseUrl}/v1/triggers/device-status`, ...triggerHint(context));
  lines.push(`In a browser: ${baseUrl}/console (sign in with the demo key; docs/console.md).`, 'More in README.md. Stop with Ctrl+C.', '');
  return lines.join('\n');
}

function screenStory(context: BannerContext, screens: { total: number; online: number }): string[] {
  const counted = `${screens.online} of Ana's ${screens.total} screens are online`;
  if (!context.demoLoaded) return [`The catalog has changed since the demo was loaded and is served as stored: ${counted}.`];
  if (context.heartbeatsSimulated) return [`Heartbeat times count from this start: ${counted}, and they keep sending heartbeats.`];
  const after = formatDuration(context.heartbeatTimeoutMs);
  return [
    `Heartbeat times count from this start: ${counted}. Nothing sends heartbeats under npm start,`,
    `so each goes offline ${after} after its last one (npm run demo keeps them beating).`,
  ];
}

/**
 * Why the polling trigger answers `[]` at first: its first call only starts watching the key,
 * and an event needs a screen to change status, which under `npm start` takes a heartbeat
 * timeout (nothing sends heartbeats) and under `npm run demo` comes every minute or so.
 */
function triggerHint(context: BannerContext): string[] {
  const first = '  (the trigger answers [] until a screen changes status: its first call starts watching the key;';
  if (context.heartbeatsSimulated) return [`${first} here screens go offline and come back every minute or so)`];
  if (!context.demoLoaded) return [`${first} events come as the screens' heartbeats stop or resume)`];
  return [
    `${first} the first screens go offline ${formatDuration(context.heartbeatTimeoutMs)} after their last heartbeat,`,
    '   or run npm run demo instead of npm start to see changes every minute or so)',
  ];
}

function formatDuration(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** The screens a user may read, and how many of them had a heartbeat after `onlineAfter`. */
async function screenCounts(db: Db, userId: string, onlineAfter: string): Promise<{ total: number; online: number }> {
  const row = await db.kysely
    .selectFrom('devices as d')
    .innerJoin('device_access as a', (join) => join.onRef('a.device_id', '=', 'd.id').on('a.user_id', '=', userId))
    .select((eb) => [
      eb.fn.countAll<number>().as('total'),
      eb.fn.sum<number>(eb.case().when('d.last_heartbeat_at', '>', onlineAfter).then(1).else(0).end()).as('online'),
    ])
    .executeTakeFirstOrThrow();
  return { total: Number(row.total), online: Number(row.online ?? 0) };
}

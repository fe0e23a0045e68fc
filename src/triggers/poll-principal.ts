import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.js';
import { keyByHash } from '../auth/embedded-keys.js';
import { AppError } from '../errors.js';
import type { DeviceSource, Principal } from '../sources/types.js';
import type { Watch, WatchStore } from './watches.js';

/**
 * Who a poll of a watched key reads the devices as. Embedded mode: the key's user, looked up
 * again (a key deleted or stripped of `device:read` since is refused, which pauses its watch).
 * Upstream mode: the key itself, unsealed for this poll, with `requestId` (the incoming
 * request a poll is made for) or one of its own as X-Request-Id.
 */
export async function pollPrincipal(deps: { db: Db; devices: DeviceSource; watches: WatchStore }, watch: Watch, requestId?: string): Promise<Principal> {
  const nobody = { keyHash: watch.key_hash, scopes: null, keyId: null, keyName: null, accountId: null, accountName: null };
  if (deps.devices.mode === 'embedded') {
    const key = await keyByHash(deps.db, watch.key_hash);
    if (!key) throw new AppError('invalid_key', 'The key no longer exists');
    if (!key.scopes.includes('device:read')) throw new AppError('invalid_scopes', 'Invalid scopes');
    return { ...nobody, key: '', userId: key.user_id };
  }
  return { ...nobody, key: deps.watches.key(watch), userId: null, requestId: requestId ?? `poll-${randomUUID()}` };
}

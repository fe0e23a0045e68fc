import { z } from 'zod';
import { component, count, timestamp } from '../catalog/registry.js';

/** The answer shapes of the operator API (docs/keys.md), registered for the OpenAPI document. */

const scope = z.enum(['device:read', 'menu:read', 'hooks:write']);

export const AdminAccountList = component(
  'AdminAccountList',
  z.array(
    z.strictObject({
      id: z.string(),
      name: z.string(),
      users: count.describe('Users of the account.'),
      keys: count.describe('Keys of its users, revoked ones included.'),
    }),
  ),
);

export const AdminUserList = component('AdminUserList', z.array(z.strictObject({ id: z.string(), account_id: z.string(), name: z.string() })));

const keyFields = {
  id: z.string(),
  name: z.string(),
  user_id: z.string(),
  account_id: z.string(),
  scopes: z.array(scope),
  prefix: z.string().nullable().describe('The key\u2019s first 8 characters, to recognise it; null for a key imported by its hash alone.'),
  created_at: timestamp,
  last_used_at: timestamp.nullable().describe('To the minute; written at most once a minute per key, so up to a minute behind.'),
  expires_at: timestamp.nullable(),
  revoked_at: timestamp.nullable(),
  rate_limit_per_minute: z.number().int().min(1).nullable().describe('The key\u2019s own limit; null = `RATE_LIMIT_PER_MINUTE`.'),
  status: z.enum(['active', 'expired', 'revoked']).describe('As of this answer.'),
};

export const AdminKey = component('AdminKey', z.strictObject(keyFields).describe('A key as the operator sees it: never the key or its hash.'));

export const AdminKeyList = component('AdminKeyList', z.array(AdminKey));

export const AdminNewKey = component(
  'AdminNewKey',
  z.strictObject({ ...keyFields, key: z.string().describe('The key itself: shown only in this answer; only its SHA-256 is stored.') }),
);

export const AdminQueue = component(
  'AdminQueue',
  z.strictObject({
    origins: z
      .array(
        z.strictObject({
          target_origin: z.string().describe('`scheme://host:port` of the hooks\u2019 targets.'),
          pending: count.describe('Deliveries not tried yet.'),
          waiting: count.describe('Deliveries tried and waiting for their next retry.'),
          dead: count.describe('Deliveries whose retries ran out (kept with the retention).'),
          oldest_due_age_ms: count.describe('How long the oldest due delivery has waited; 0 when none is due.'),
        }),
      )
      .describe('Per target origin, the busiest first.'),
    poller: z.strictObject({
      watched_keys: count.describe('Keys the poller watches (not paused).'),
      overdue_keys: count.describe('Watched keys due for a poll for more than one `POLL_INTERVAL_MS` and not being polled.'),
      oldest_overdue_ms: count.describe('How long the most overdue key has waited past its poll time.'),
      paused_keys: count.describe('Watches paused because the upstream rejected their key.'),
    }),
  }),
);

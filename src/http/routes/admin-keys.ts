import { z } from 'zod';
import { expiryOf, graceSeconds, keyFields } from '../../auth/key-input.js';
import { validationError } from '../../errors.js';
import { AdminKey, AdminKeyList, AdminNewKey } from '../responses.js';
import { defineRoute } from '../route.js';
import { afterCursor, embeddedKeysOnly, idParam, operator, pageHeaders, pageQuery, sendPage } from './admin.js';

/**
 * The operator API's keys (docs/keys.md): list, create (the key shown once), change, revoke,
 * roll. Each goes through `auth/key-store.ts`, as `npm run keys` does; in upstream mode each
 * answers 409.
 */

const upstreamConflict = { 409: 'Upstream mode: keys belong to the upstream, and `message` says so.' } as const;
const oneKey = { ...operator, params: z.object({ id: z.string().describe('The key id (`key_…`).') }) } as const;

const bodyError = '`body must be a JSON object`, `Request body is not valid JSON`, or a bad field: `message` names the first, `details` lists every one.';

export const listKeys = defineRoute({
  ...operator,
  method: 'get',
  path: '/admin/v1/keys',
  operationId: 'adminListKeys',
  summary: 'Keys',
  description: 'Keys in id order, of one account or user when given; never the key or its hash.',
  query: z.object({
    account_id: idParam('account_id').optional().describe('Only keys of this account\u2019s users.'),
    user_id: idParam('user_id').optional().describe('Only this user\u2019s keys.'),
    ...pageQuery,
  }),
  responses: { 200: { description: 'One page of keys.', schema: AdminKeyList, headers: pageHeaders } },
  errors: upstreamConflict,
  async handler({ req, res, services, query }) {
    embeddedKeysOnly(services);
    const page = await services.keyStore.page({ accountId: query.account_id, userId: query.user_id }, { limit: query.limit, after: afterCursor(query.cursor) });
    sendPage(req, res, services, page);
  },
});

export const createKey = defineRoute({
  ...operator,
  method: 'post',
  path: '/admin/v1/keys',
  operationId: 'adminCreateKey',
  summary: 'Create a key',
  description: 'The answer carries the key itself, once: only its SHA-256 and first 8 characters are stored.',
  body: z.object(
    {
      user_id: z.string({ error: 'user_id is required and must be a string' }).min(1, 'user_id is required').describe('The user the key acts as.'),
      scopes: keyFields.scopes,
      name: keyFields.name,
      expires_at: keyFields.expires_at.optional(),
      rate_limit_per_minute: keyFields.rate_limit_per_minute.optional(),
    },
    { error: 'body must be a JSON object' },
  ),
  responses: { 201: { description: 'Created; `key` is shown only here.', schema: AdminNewKey } },
  errors: { 400: `${bodyError} An unknown \`user_id\` is a 400 too.`, ...upstreamConflict },
  async handler({ res, services, body }) {
    embeddedKeysOnly(services);
    const expires_at = expiryOf(body.expires_at, services.clock.now());
    const { key, view } = await services.keyStore.create({ ...body, expires_at });
    res.status(201).json({ ...view, key });
  },
});

export const updateKey = defineRoute({
  ...oneKey,
  method: 'patch',
  path: '/admin/v1/keys/{id}',
  operationId: 'adminUpdateKey',
  summary: 'Change a key',
  description: 'Any of `name`, `scopes`, `expires_at`, `rate_limit_per_minute` (null clears the last two). Every replica applies a change within 5 s.',
  body: z.object(
    {
      name: keyFields.name.optional(),
      scopes: keyFields.scopes.optional(),
      expires_at: keyFields.expires_at.optional(),
      rate_limit_per_minute: keyFields.rate_limit_per_minute.optional(),
    },
    { error: 'body must be a JSON object' },
  ),
  responses: { 200: { description: 'The key as changed.', schema: AdminKey } },
  errors: { 400: bodyError, 404: '`Key not found`.', ...upstreamConflict },
  async handler({ res, services, params, body }) {
    embeddedKeysOnly(services);
    if (Object.values(body).every((value) => value === undefined)) {
      throw validationError([{ path: '', message: 'body must change at least one of name, scopes, expires_at, rate_limit_per_minute' }]);
    }
    const expires_at = expiryOf(body.expires_at, services.clock.now());
    const changed = await services.keyStore.update(params.id, { ...body, expires_at });
    services.keys.me.forget?.(params.id);
    res.json(changed);
  },
});

export const revokeKey = defineRoute({
  ...oneKey,
  method: 'delete',
  path: '/admin/v1/keys/{id}',
  operationId: 'adminRevokeKey',
  summary: 'Revoke a key',
  description:
    'The key is refused with 401 `API key revoked` at once on this replica and within 5 s on every other. Repeating it changes nothing (still 204); the key stays listed with `revoked_at`.',
  responses: { 204: { description: 'Revoked.' } },
  errors: { 404: '`Key not found`.', ...upstreamConflict },
  async handler({ res, services, params }) {
    embeddedKeysOnly(services);
    await services.keyStore.revoke(params.id);
    services.keys.me.forget?.(params.id);
    res.status(204).end();
  },
});

export const rollKey = defineRoute({
  ...oneKey,
  method: 'post',
  path: '/admin/v1/keys/{id}/roll',
  operationId: 'adminRollKey',
  summary: 'Roll a key',
  description:
    'A new key for the same user, with the same name, scopes and limit; the old one keeps working for `grace_seconds`, then is refused with 401 `API key expired` (an earlier expiry it had stays). Rolling the same key again is safe: it makes another new key and never extends the old one\u2019s life.',
  body: z.object({ grace_seconds: graceSeconds }, { error: 'body must be a JSON object' }),
  responses: { 201: { description: 'The new key; `key` is shown only here.', schema: AdminNewKey } },
  errors: { 400: bodyError, 404: '`Key not found`.', 409: '`Key is revoked`: a revoked key cannot be rolled; or upstream mode: keys belong to the upstream.' },
  async handler({ res, services, params, body }) {
    embeddedKeysOnly(services);
    const { key, view } = await services.keyStore.roll(params.id, body.grace_seconds);
    services.keys.me.forget?.(params.id);
    res.status(201).json({ ...view, key });
  },
});

import { z } from 'zod';
import { AppError } from '../../errors.js';
import { originHealth, pollerHealth } from '../../metrics/queue-health.js';
import { nextPageUrl } from '../base-url.js';
import { scalarParam, intParam } from '../query.js';
import { AdminAccountList, AdminQueue, AdminUserList } from '../responses.js';
import { defineRoute } from '../route.js';
import type { Request, Response } from 'express';
import type { Services } from '../../services.js';

/**
 * The operator API (docs/keys.md): accounts, users and queue health here, keys in
 * `admin-keys.ts`. Every route takes `Authorization: Bearer <ADMIN_TOKEN>` and answers 404
 * without `ADMIN_TOKEN` (`auth/admin-token.ts`, installed by the router for `admin: true`).
 */
export const operator = { tag: 'Operator', admin: true } as const;

/** A position in an id-ordered list, as an opaque cursor (base64url of the last id). */
const encodeCursor = (id: string) => Buffer.from(id).toString('base64url');
/** The id after which a page starts. */
export const afterCursor = (cursor: string | undefined) => (cursor === undefined ? undefined : Buffer.from(cursor, 'base64url').toString());

/** `limit` and `cursor`, as `GET /v1/hooks` pages. */
export const pageQuery = {
  limit: intParam('limit', 1, 500)
    .default(100)
    .describe('Page size, 1–500 (default 100). The next page is in the `Link` header; `X-Total-Count` gives the matches in all.'),
  cursor: scalarParam('cursor')
    .regex(/^[A-Za-z0-9_-]{1,400}$/, 'cursor is not valid; start again without it')
    .optional()
    .describe('The opaque cursor of the next page, from the previous page\u2019s `Link`.'),
};

export const pageHeaders = {
  'X-Total-Count': { description: 'The matches in all, not just this page.', schema: { type: 'integer', minimum: 0 } },
  Link: { description: 'When there is more: `<next page URL>; rel="next"`.', schema: { type: 'string' } },
};

/** Sends one page: the items, `X-Total-Count`, and `Link` to the next page. */
export function sendPage(req: Request, res: Response, services: Services, page: { items: unknown[]; total: number; next: string | null }): void {
  res.setHeader('X-Total-Count', String(page.total));
  if (page.next !== null) res.setHeader('Link', `<${nextPageUrl(req, services.config.PUBLIC_URL, encodeCursor(page.next))}>; rel="next"`);
  res.json(page.items);
}

const idParam = (name: string) => scalarParam(name).min(1, `${name} must not be empty`).max(200, `${name} must be at most 200 characters`);

export const listAccounts = defineRoute({
  ...operator,
  method: 'get',
  path: '/admin/v1/accounts',
  operationId: 'adminListAccounts',
  summary: 'Accounts',
  description: 'The embedded catalog\u2019s accounts in id order, with their numbers of users and keys.',
  query: z.object(pageQuery),
  responses: { 200: { description: 'One page of accounts.', schema: AdminAccountList, headers: pageHeaders } },
  async handler({ req, res, services, query }) {
    sendPage(req, res, services, await services.directory.accounts({ limit: query.limit, after: afterCursor(query.cursor) }));
  },
});

export const listUsers = defineRoute({
  ...operator,
  method: 'get',
  path: '/admin/v1/users',
  operationId: 'adminListUsers',
  summary: 'Users',
  description: 'The embedded catalog\u2019s users in id order, of one account when `account_id` is given.',
  query: z.object({ account_id: idParam('account_id').optional().describe('Only this account\u2019s users.'), ...pageQuery }),
  responses: { 200: { description: 'One page of users.', schema: AdminUserList, headers: pageHeaders } },
  async handler({ req, res, services, query }) {
    sendPage(req, res, services, await services.directory.users(query.account_id, { limit: query.limit, after: afterCursor(query.cursor) }));
  },
});

export const queueHealth = defineRoute({
  ...operator,
  method: 'get',
  path: '/admin/v1/queue',
  operationId: 'adminQueue',
  summary: 'Queue health',
  description: 'The webhook delivery queue per target origin and the poller\u2019s lag, read from the database (every replica\u2019s work).',
  responses: { 200: { description: 'The queue and the poller.', schema: AdminQueue } },
  async handler({ res, services }) {
    const now = services.clock.now();
    const [origins, poller, oldest] = await Promise.all([
      originHealth(services.db, now),
      pollerHealth(services.db, now, services.config.POLL_INTERVAL_MS),
      services.watches.oldestOverdueMs(),
    ]);
    res.json({ origins, poller: { ...poller, oldest_overdue_ms: oldest } });
  },
});

/** Upstream mode: the upstream owns the keys, so the operator API cannot manage them. */
export function embeddedKeysOnly(services: Services): void {
  if (services.config.DEVICE_API_URL || services.config.MENU_API_URL) {
    throw new AppError('conflict', 'Keys belong to the upstream in upstream mode (DEVICE_API_URL or MENU_API_URL is set): manage them there');
  }
}

export { idParam };

import type { Db } from '../db/database.js';
import type { RequestWaits } from '../db/wait-budget.js';
import { requestView } from '../db/request-view.js';

/** A page in id order: `next` is the last id when more follow. */
export interface IdPage<T> {
  items: T[];
  total: number;
  next: string | null;
}

/**
 * The embedded catalog's accounts and users, as the operator API lists them (docs/keys.md),
 * a page at a time in id order.
 */
export class CatalogDirectory {
  constructor(private readonly db: Db) {}

  /** This store as one request uses it: its database waits share the request's deadline (db/wait-budget.ts). */
  within(waits: RequestWaits | undefined): this {
    return requestView(this, this.db, waits);
  }

  async accounts(options: { limit: number; after?: string }): Promise<IdPage<{ id: string; name: string; users: number; keys: number }>> {
    const [rows, count] = await Promise.all([
      this.db.kysely
        .selectFrom('accounts as a')
        .select((eb) => [
          'a.id',
          'a.name',
          eb
            .selectFrom('users as u')
            .whereRef('u.account_id', '=', 'a.id')
            .select((e) => e.fn.countAll<number>().as('n'))
            .as('users'),
          eb
            .selectFrom('api_keys as k')
            .innerJoin('users as u', 'u.id', 'k.user_id')
            .whereRef('u.account_id', '=', 'a.id')
            .select((e) => e.fn.countAll<number>().as('n'))
            .as('keys'),
        ])
        .$if(options.after !== undefined, (q) => q.where('a.id', '>', options.after!))
        .orderBy('a.id')
        .limit(options.limit + 1)
        .execute(),
      this.db.kysely
        .selectFrom('accounts')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .executeTakeFirstOrThrow(),
    ]);
    const items = rows.slice(0, options.limit).map((row) => ({ id: row.id, name: row.name, users: Number(row.users ?? 0), keys: Number(row.keys ?? 0) }));
    return { items, total: Number(count.n), next: rows.length > options.limit ? items.at(-1)!.id : null };
  }

  async users(accountId: string | undefined, options: { limit: number; after?: string }): Promise<IdPage<{ id: string; account_id: string; name: string }>> {
    const filtered = this.db.kysely.selectFrom('users').$if(accountId !== undefined, (q) => q.where('account_id', '=', accountId!));
    const [rows, count] = await Promise.all([
      filtered
        .select(['id', 'account_id', 'name'])
        .$if(options.after !== undefined, (q) => q.where('id', '>', options.after!))
        .orderBy('id')
        .limit(options.limit + 1)
        .execute(),
      filtered.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    const items = rows.slice(0, options.limit);
    return { items, total: Number(count.n), next: rows.length > options.limit ? items.at(-1)!.id : null };
  }
}

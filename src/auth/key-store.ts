import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Tables } from '../db/tables.js';
import { AppError } from '../errors.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import { generateKey, hashKey, keyPrefix } from './keys.js';
import type { RequestWaits } from '../db/wait-budget.js';
import { requestView } from '../db/request-view.js';

/**
 * The keys of the embedded catalog and their lifecycle (docs/keys.md): list, create (the key
 * is returned once; only its SHA-256 and first 8 characters are stored), change, revoke, roll.
 * The operator API and `npm run keys` both go through here; it is the only writer of
 * `api_keys` (a dataset import writes through `importKeys`). Every operation is safe to repeat
 * and to race across replicas: each is one statement, or a transaction that re-reads the row.
 */

/** A key as the operator sees it: never its hash. */
export interface KeyView {
  id: string;
  name: string;
  user_id: string;
  account_id: string;
  scopes: string[];
  prefix: string | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  rate_limit_per_minute: number | null;
  /** `revoked` and `expired` as of the answer; otherwise `active`. */
  status: 'active' | 'expired' | 'revoked';
}

export interface NewKey {
  user_id: string;
  scopes: string[];
  name: string;
  /** A catalog timestamp (six fractional digits), or null. */
  expires_at?: string | null;
  rate_limit_per_minute?: number | null;
}

export type KeyChanges = Partial<Pick<NewKey, 'name' | 'scopes' | 'expires_at' | 'rate_limit_per_minute'>>;

export interface KeyFilter {
  accountId?: string;
  userId?: string;
}

/** A page of keys in id order: `next` is the last id when more follow. */
export interface KeyPage {
  items: KeyView[];
  total: number;
  next: string | null;
}

const columns = [
  'k.id',
  'k.name',
  'k.user_id',
  'u.account_id',
  'k.scopes',
  'k.prefix',
  'k.created_at',
  'k.last_used_at',
  'k.expires_at',
  'k.revoked_at',
  'k.rate_limit_per_minute',
] as const;

type KeyRow = Omit<KeyView, 'scopes' | 'status'> & { scopes: string };

export class KeyStore {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  /** This store as one request uses it: its database waits share the request's deadline (db/wait-budget.ts). */
  within(waits: RequestWaits | undefined): this {
    return requestView(this, this.db, waits);
  }

  private now(): string {
    return formatMicros(this.clock.now() * 1000);
  }

  private view(row: KeyRow): KeyView {
    const now = this.now();
    const status = row.revoked_at !== null ? 'revoked' : row.expires_at !== null && row.expires_at <= now ? 'expired' : 'active';
    return {
      ...row,
      rate_limit_per_minute: row.rate_limit_per_minute === null ? null : Number(row.rate_limit_per_minute),
      scopes: JSON.parse(row.scopes) as string[],
      status,
    };
  }

  private select(executor: Kysely<Tables> = this.db.kysely) {
    return executor.selectFrom('api_keys as k').innerJoin('users as u', 'u.id', 'k.user_id');
  }

  async page(filter: KeyFilter, options: { limit: number; after?: string }): Promise<KeyPage> {
    const filtered = this.select()
      .$if(filter.accountId !== undefined, (q) => q.where('u.account_id', '=', filter.accountId!))
      .$if(filter.userId !== undefined, (q) => q.where('k.user_id', '=', filter.userId!));
    const [rows, count] = await Promise.all([
      filtered
        .select(columns)
        .$if(options.after !== undefined, (q) => q.where('k.id', '>', options.after!))
        .orderBy('k.id')
        .limit(options.limit + 1)
        .execute(),
      filtered.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    const more = rows.length > options.limit;
    const items = rows.slice(0, options.limit).map((row) => this.view(row));
    return { items, total: Number(count.n), next: more ? items.at(-1)!.id : null };
  }

  async get(id: string, executor?: Kysely<Tables>): Promise<KeyView> {
    const row = await this.select(executor).select(columns).where('k.id', '=', id).executeTakeFirst();
    if (!row) throw new AppError('not_found', 'Key not found');
    return this.view(row);
  }

  /** Creates a key for a user; the key itself is in the answer only. */
  async create(input: NewKey): Promise<{ key: string; view: KeyView }> {
    return this.db.transaction(async (trx) => {
      const user = await trx.selectFrom('users').select('id').where('id', '=', input.user_id).executeTakeFirst();
      if (!user) throw new AppError('validation', `Unknown user "${input.user_id}"`, [{ path: 'user_id', message: `Unknown user "${input.user_id}"` }]);
      return this.insert(trx, input);
    });
  }

  private async insert(trx: Kysely<Tables>, input: NewKey): Promise<{ key: string; view: KeyView }> {
    const key = generateKey();
    const id = `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
    await trx
      .insertInto('api_keys')
      .values({
        id,
        user_id: input.user_id,
        name: input.name,
        key_sha256: hashKey(key),
        scopes: JSON.stringify([...new Set(input.scopes)]),
        created_at: this.now(),
        prefix: keyPrefix(key),
        expires_at: input.expires_at ?? null,
        rate_limit_per_minute: input.rate_limit_per_minute ?? null,
      })
      .execute();
    return { key, view: await this.get(id, trx) };
  }

  async update(id: string, changes: KeyChanges): Promise<KeyView> {
    const set: Partial<Tables['api_keys']> = {};
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.scopes !== undefined) set.scopes = JSON.stringify([...new Set(changes.scopes)]);
    if (changes.expires_at !== undefined) set.expires_at = changes.expires_at;
    if (changes.rate_limit_per_minute !== undefined) set.rate_limit_per_minute = changes.rate_limit_per_minute;
    if (Object.keys(set).length > 0) await this.db.kysely.updateTable('api_keys').set(set).where('id', '=', id).execute();
    return this.get(id);
  }

  /** Revokes a key at once (a revoked key stays revoked: repeating it changes nothing). */
  async revoke(id: string): Promise<KeyView> {
    await this.db.kysely.updateTable('api_keys').set({ revoked_at: this.now() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    return this.get(id);
  }

  /**
   * A new key for the same user, scopes and limit; the old one expires `graceSeconds` from now
   * (or keeps an earlier expiry). Rolling a key again makes another new key and never extends
   * the old one's life. A revoked key cannot be rolled.
   */
  async roll(id: string, graceSeconds: number): Promise<{ key: string; view: KeyView; previous: KeyView }> {
    return this.db.transaction(async (trx) => {
      const old = await this.get(id, trx);
      if (old.revoked_at !== null) throw new AppError('conflict', 'Key is revoked: create a new one instead of rolling it');
      const until = formatMicros((this.clock.now() + graceSeconds * 1000) * 1000);
      await trx
        .updateTable('api_keys')
        .set({ expires_at: sql`CASE WHEN expires_at IS NOT NULL AND expires_at < ${until} THEN expires_at ELSE ${until} END` })
        .where('id', '=', id)
        .execute();
      const made = await this.insert(trx, {
        user_id: old.user_id,
        scopes: old.scopes,
        name: old.name,
        expires_at: null,
        rate_limit_per_minute: old.rate_limit_per_minute,
      });
      return { ...made, previous: await this.get(id, trx) };
    });
  }

  /** Writes when keys were last used (to the minute), from the in-memory record of use (`KeyUsage`). */
  async recordUse(uses: ReadonlyMap<string, string>): Promise<void> {
    const byMinute = new Map<string, string[]>();
    for (const [id, minute] of uses) byMinute.set(minute, [...(byMinute.get(minute) ?? []), id]);
    for (const [minute, ids] of byMinute) {
      await this.db.kysely
        .updateTable('api_keys')
        .set({ last_used_at: minute })
        .where('id', 'in', ids)
        .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', minute)]))
        .execute();
    }
  }
}

/** A key of a dataset, as `importKeys` writes it. */
export interface ImportedKey {
  id: string;
  user_id: string;
  name: string;
  key_sha256: string;
  /** Known when the dataset gave the key itself. */
  prefix: string | null;
  scopes: string;
  created_at: string;
  expires_at: string | null;
  rate_limit_per_minute: number | null;
}

/**
 * Upserts a slice of a dataset's keys by id inside the import's transaction. The hashes of the
 * keys the slice rewrites are parked first, so keys in one file may swap or hand over hashes
 * without tripping UNIQUE(key_sha256) half-way. A key's use, revocation and creation time are
 * the catalog's own and survive a re-import.
 */
export async function importKeys(trx: Kysely<Tables>, part: ImportedKey[]): Promise<void> {
  await trx
    .updateTable('api_keys')
    .set({ key_sha256: sql`'moving:' || id` })
    .where(
      'id',
      'in',
      part.map((k) => k.id),
    )
    .execute();
  await trx
    .insertInto('api_keys')
    .values(part)
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        user_id: eb.ref('excluded.user_id'),
        name: eb.ref('excluded.name'),
        key_sha256: eb.ref('excluded.key_sha256'),
        scopes: eb.ref('excluded.scopes'),
        prefix: eb.ref('excluded.prefix'),
        expires_at: eb.ref('excluded.expires_at'),
        rate_limit_per_minute: eb.ref('excluded.rate_limit_per_minute'),
      })),
    )
    .execute();
}

import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables } from '../db/tables.js';
import type { Db } from '../db/database.js';
import { inSlices } from '../db/slices.js';
import { retryDeadlocks } from '../db/deadlock.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { AppError } from '../errors.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import type { HookEventType as EventType } from '../catalog/event.js';
import { hookIdentity, targetOrigin } from '../db/hook-identity.js';
import { generateSecret } from './signing.js';
import { ownerDisabledReason, type Hook, type HookChanges, type HookInput, type HookPosition } from './hook-types.js';
import type { RequestWaits } from '../db/wait-budget.js';
import { requestView } from '../db/request-view.js';
export { ownerDisabledReason };
export type { Hook, HookChanges, HookInput, HookPosition } from './hook-types.js';

interface HookRow {
  id: string;
  target_url: string;
  events: string;
  device_ids: string | null;
  secret_cipher: string;
  status: Hook['status'];
  status_reason: string | null;
  created_at: string;
}

const columns = ['id', 'target_url', 'events', 'device_ids', 'secret_cipher', 'status', 'status_reason', 'created_at'] as const;

function toHook(row: HookRow): Hook {
  return {
    id: row.id,
    target_url: row.target_url,
    events: JSON.parse(row.events) as EventType[],
    device_ids: row.device_ids === null ? null : (JSON.parse(row.device_ids) as string[]),
    status: row.status,
    status_reason: row.status_reason,
    created_at: row.created_at,
  };
}

/**
 * The writes to `hooks` that other modules make inside their own transactions. With HookStore
 * below, this module is the one writer of the table (docs/architecture.md, one writer per table).
 */
export const hookWrites = {
  /** The key was rejected upstream: its active hooks show why and get no device events until it is used again. Returns those it paused. */
  async pauseKey(trx: Kysely<Tables>, keyHash: string, reason: string): Promise<Array<{ id: string; target_url: string }>> {
    const active = trx.updateTable('hooks').where('key_hash', '=', keyHash).where('status', '=', 'active');
    return active.set({ status: 'paused', status_reason: reason }).returning(['id', 'target_url']).execute();
  },
  /** The key was used successfully again: its paused hooks are active again. */
  async resumeKey(trx: Kysely<Tables>, keyHash: string): Promise<void> {
    await trx.updateTable('hooks').set({ status: 'active', status_reason: null }).where('key_hash', '=', keyHash).where('status', '=', 'paused').execute();
  },
  /** The receiver answered 410: the hook gets nothing more (deleted after the event retention). */
  async disable(trx: Kysely<Tables>, hookId: string, reason: string, at: number): Promise<void> {
    await trx.updateTable('hooks').set({ status: 'disabled', status_reason: reason, disabled_at: at }).where('id', '=', hookId).execute();
  },
  /** Where the hook's next delivery takes its place in its origin's fair order (fan-out.ts). */
  async setFairCursor(trx: Kysely<Tables>, hookId: string, cursor: number): Promise<void> {
    await trx.updateTable('hooks').set({ fair_cursor: cursor }).where('id', '=', hookId).execute();
  },
  /** PostgreSQL: `setFairCursor` for each hook of the `WITH` item `cursors` (hook_id, cursor) in one statement (fan-out.ts); their ids. */
  setFairCursorsSql: (cursors: string): RawBuilder<unknown> =>
    sql`UPDATE hooks SET fair_cursor = c.cursor FROM ${sql.table(cursors)} c WHERE hooks.id = c.hook_id RETURNING hooks.id`,
};

/** REST-hook subscriptions per key (docs/webhooks.md). Signing secrets are stored sealed. */
export class HookStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    /** WEBHOOK_MAX_HOOKS_PER_KEY: hooks a key may hold that are not disabled. */
    private readonly maxPerKey = 1000,
    /** WEBHOOK_SECRET_OVERLAP_MS: how long a rotated-away secret still signs. */
    private readonly secretOverlapMs = 86_400_000,
  ) {}

  /** This store as one request uses it: its database waits share the request's deadline (db/wait-budget.ts). */
  within(waits: RequestWaits | undefined): this {
    return requestView(this, this.db, waits);
  }

  /** Under a per-key lock (Db.lockKey): the limit and identities hold across replicas. */
  private async lockKey(trx: Kysely<Tables>, keyHash: string): Promise<void> {
    await this.db.lockKey(trx, `hooks:${keyHash}`);
  }

  /** 409 when the key already holds `maxPerKey` hooks that are not disabled. */
  private async checkLimit(trx: Kysely<Tables>, keyHash: string): Promise<void> {
    const { held } = await trx
      .selectFrom('hooks')
      .select((eb) => eb.fn.countAll<number>().as('held'))
      .where('key_hash', '=', keyHash)
      .where('status', '!=', 'disabled')
      .executeTakeFirstOrThrow();
    if (Number(held) >= this.maxPerKey) {
      throw new AppError('limit_reached', `This key already holds ${this.maxPerKey} hooks, the most it may (WEBHOOK_MAX_HOOKS_PER_KEY); delete one first`);
    }
  }

  /**
   * `PATCH /v1/hooks/{id}`: new events or devices, or enabled/disabled. A disabled hook gets no new deliveries
   * and its pending ones wait (`held`: the claims skip a disabled hook's queue); enabled again, they are sent.
   * Enabling counts against `maxPerKey` (409), and a hook may not become the same subscription (key, URL,
   * events, devices) as another hook that is not disabled (409 naming it): subscribing stays idempotent.
   */
  async update(keyHash: string, id: string, changes: HookChanges): Promise<Hook> {
    return this.db.transaction(async (trx) => {
      await this.lockKey(trx, keyHash);
      const row = await trx.selectFrom('hooks').select(columns).where('key_hash', '=', keyHash).where('id', '=', id).executeTakeFirst();
      if (!row) throw new AppError('not_found', 'Hook not found');
      const next: HookRow = { ...row };
      if (changes.events) next.events = JSON.stringify([...new Set(changes.events)].sort());
      if (changes.device_ids !== undefined) next.device_ids = changes.device_ids === null ? null : JSON.stringify([...new Set(changes.device_ids)].sort());
      let disabledAt: number | null | undefined;
      if (changes.enabled === false && row.status !== 'disabled') {
        Object.assign(next, { status: 'disabled', status_reason: ownerDisabledReason });
        disabledAt = this.clock.now();
      }
      if (changes.enabled === true && row.status === 'disabled') {
        await this.checkLimit(trx, keyHash);
        Object.assign(next, { status: 'active', status_reason: null });
        disabledAt = null;
      }
      const identity = hookIdentity(keyHash, row.target_url, next.events, next.device_ids);
      if (next.status !== 'disabled') {
        const same = await trx
          .selectFrom('hooks')
          .select('id')
          .where('identity', '=', identity)
          .where('status', '!=', 'disabled')
          .where('id', '!=', id)
          .executeTakeFirst();
        if (same) throw new AppError('conflict', `Hook ${same.id} already delivers the same events of the same devices to this target_url`);
      }
      await trx
        .updateTable('hooks')
        .set({
          events: next.events,
          device_ids: next.device_ids,
          identity,
          status: next.status,
          status_reason: next.status_reason,
          ...(disabledAt === undefined ? {} : { disabled_at: disabledAt }),
        })
        .where('id', '=', id)
        .execute();
      return toHook(next);
    });
  }

  /**
   * A new signing secret (`secret`, or a generated one), returned this once. The one it replaces is kept sealed
   * and still signs every delivery for `secretOverlapMs` (a second signature), so receivers switch without losing
   * a delivery. A second rotation within the overlap drops the oldest secret: only the last two ever sign.
   */
  async rotateSecret(keyHash: string, id: string, secret: string = generateSecret()): Promise<string> {
    const sealed = this.box.seal(secret);
    const until = this.clock.now() + this.secretOverlapMs;
    await this.db.transaction(async (trx) => {
      const row = await trx.selectFrom('hooks').select('secret_cipher').where('key_hash', '=', keyHash).where('id', '=', id).executeTakeFirst();
      if (!row) throw new AppError('not_found', 'Hook not found');
      await trx
        .updateTable('hooks')
        .set({ secret_cipher: sealed, secret_previous_cipher: row.secret_cipher, secret_previous_until: until })
        .where('id', '=', id)
        .execute();
    });
    return secret;
  }

  /**
   * Subscribes, idempotently: the same key + URL + events + device ids returns the existing (not disabled) hook,
   * secret included, with `created: false`. The identity's unique index settles two identical subscriptions racing
   * on two replicas: one inserts, the other finds it. A new hook past `maxPerKey` is a 409 naming the limit; the
   * count and the insert share one transaction, under a per-key lock on PostgreSQL, so replicas cannot slip past it.
   */
  async create(keyHash: string, input: HookInput): Promise<{ hook: Hook & { secret: string }; created: boolean }> {
    const events = JSON.stringify([...new Set(input.events)].sort());
    const devices = input.device_ids === null ? null : JSON.stringify([...new Set(input.device_ids)].sort());
    const identity = hookIdentity(keyHash, input.target_url, events, devices);
    const secret = generateSecret();
    const row: HookRow = {
      id: `hook_${randomBytes(12).toString('hex')}`,
      target_url: input.target_url,
      events,
      device_ids: devices,
      secret_cipher: this.box.seal(secret),
      status: 'active',
      status_reason: null,
      created_at: formatMicros(this.clock.now() * 1000),
    };
    const inserted = await this.db.transaction(async (trx) => {
      await this.lockKey(trx, keyHash);
      const same = await trx.selectFrom('hooks').select('id').where('identity', '=', identity).where('status', '!=', 'disabled').executeTakeFirst();
      if (!same) await this.checkLimit(trx, keyHash);
      return trx
        .insertInto('hooks')
        .values({ ...row, key_hash: keyHash, identity, target_origin: targetOrigin(input.target_url) })
        .onConflict((oc) => oc.doNothing())
        .returning('id')
        .executeTakeFirst();
    });
    if (inserted) return { hook: { ...toHook(row), secret }, created: true };
    const existing = await this.db.kysely
      .selectFrom('hooks')
      .select(columns)
      .where('identity', '=', identity)
      .where('status', '!=', 'disabled')
      .executeTakeFirst();
    // Disabled between the insert and this read: subscribe again, now without the conflict.
    if (!existing) return this.create(keyHash, input);
    return { hook: { ...toHook(existing), secret: this.box.open(existing.secret_cipher) }, created: false };
  }

  /** Every hook of a key, oldest first (tools and tests; `GET /v1/hooks` pages with `page`). */
  async list(keyHash: string): Promise<Hook[]> {
    const rows = await this.db.kysely.selectFrom('hooks').select(columns).where('key_hash', '=', keyHash).orderBy('created_at').orderBy('id').execute();
    return rows.map(toHook);
  }

  /**
   * One page of a key's hooks, oldest first (created_at, then id), after `after` (a keyset
   * position, never an offset), with the key's total and where the next page starts.
   */
  async page(keyHash: string, page: { limit: number; after?: HookPosition }): Promise<{ hooks: Hook[]; total: number; next: HookPosition | null }> {
    const { after } = page;
    const rows = await this.db.kysely
      .selectFrom('hooks')
      .select(columns)
      .where('key_hash', '=', keyHash)
      .$if(after !== undefined, (q) =>
        q.where((eb) => eb.or([eb('created_at', '>', after!.created_at), eb.and([eb('created_at', '=', after!.created_at), eb('id', '>', after!.id)])])),
      )
      .orderBy('created_at')
      .orderBy('id')
      .limit(page.limit + 1)
      .execute();
    const { total } = await this.db.kysely
      .selectFrom('hooks')
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .where('key_hash', '=', keyHash)
      .executeTakeFirstOrThrow();
    const shown = rows.slice(0, page.limit);
    const last = shown[shown.length - 1];
    return { hooks: shown.map(toHook), total: Number(total), next: rows.length > page.limit && last ? { created_at: last.created_at, id: last.id } : null };
  }

  /** A hook of another key is as absent as one that never existed. */
  async get(keyHash: string, id: string): Promise<Hook> {
    const row = await this.db.kysely.selectFrom('hooks').select(columns).where('key_hash', '=', keyHash).where('id', '=', id).executeTakeFirst();
    if (!row) throw new AppError('not_found', 'Hook not found');
    return toHook(row);
  }

  /**
   * Unsubscribes; queued deliveries of the hook go with it (the hook's row is locked first,
   * then its deliveries by cascade: the deliverer's lock order). A deadlock's victim is retried.
   */
  async delete(keyHash: string, id: string): Promise<void> {
    const result = await retryDeadlocks(() => this.db.kysely.deleteFrom('hooks').where('key_hash', '=', keyHash).where('id', '=', id).executeTakeFirst());
    if (Number(result.numDeletedRows) === 0) throw new AppError('not_found', 'Hook not found');
  }

  /**
   * Deletes hooks disabled before `cutoff` (ms), with what is left of their queue and attempts.
   * A disabled hook with no time of its own (disabled before the time was kept) gets now, so it
   * too is kept one full retention period. A few hooks per statement (each may take what is
   * left of its queue with it), other work running in between; `signal` stops it between them.
   */
  async pruneDisabled(cutoff: number, signal?: AbortSignal): Promise<number> {
    await this.db.kysely
      .updateTable('hooks')
      .set({ disabled_at: this.clock.now() })
      .where('status', '=', 'disabled')
      .where('disabled_at', 'is', null)
      .execute();
    const { rows } = await inSlices(
      this.db.engine,
      async (limit) => {
        const size = Math.max(1, Math.min(100, Math.floor(limit / 50)));
        const ids = (
          await this.db.kysely.selectFrom('hooks').select('id').where('status', '=', 'disabled').where('disabled_at', '<', cutoff).limit(size).execute()
        ).map((h) => h.id);
        if (ids.length === 0) return { rows: 0, more: false };
        const result = await retryDeadlocks(() =>
          this.db.kysely.deleteFrom('hooks').where('id', 'in', ids).where('status', '=', 'disabled').where('disabled_at', '<', cutoff).executeTakeFirst(),
        );
        return { rows: Number(result.numDeletedRows), more: ids.length === size };
      },
      signal,
    );
    return rows;
  }
}

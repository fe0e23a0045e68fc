import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables } from '../db/tables.js';
import type { Db } from '../db/database.js';
import { retryDeadlocks } from '../db/deadlock.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Principal } from '../sources/types.js';
import type { Clock } from '../time/timestamps.js';
import { watchColumns as columns, watchedAt, type Watch, type WatchClaim, type WatchQueue } from './watch-queue.js';
import type { RequestWaits } from '../db/wait-budget.js';
import { requestView } from '../db/request-view.js';

export type { Watch };

/**
 * The writes to a key's hooks that go with its watch, in the same transaction: paused with it
 * (and a `hook.disabled` notice logged for each), active again when it resumes.
 * webhooks/hook-store.ts's hookWrites (the one writer of `hooks`) and
 * webhooks/operational-events.ts, passed in by services.ts: webhooks/ sits above triggers/.
 */
export interface KeyHooks {
  pauseKey(trx: Kysely<Tables>, keyHash: string, reason: string): Promise<unknown>;
  resumeKey(trx: Kysely<Tables>, keyHash: string): Promise<void>;
  /** After a pause committed (the notices it queued may be sent now). */
  paused?(): void;
}

/** The lease a request takes at enrolment for its own poll of the key (the poller's replica id and lease length). */
export interface RequestLease {
  owner: string;
  leaseMs: number;
}

/** The key's snapshot digest as a poll leaves it. */
export interface DigestChange {
  /** The digest after the poll; null: none (a big key, or records that could not be read). */
  next: string | null;
  /** The poll found nothing changed because its listing had this digest, the key's: recorded only while the key still has it. */
  unchangedFrom?: string;
}

/** Where the poll that produced a record leaves the key's schedule. */
export interface PollLease {
  /** The replica's lease id; null when the poll was not leased (a request enrolling the key). */
  owner: string | null;
  nextPollAt: number;
}

/** The replica lost the key's lease while polling (it outlived it): nothing was written. */
export class LeaseLostError extends Error {
  constructor() {
    super('poll lease lost');
    this.name = 'LeaseLostError';
  }
}

/**
 * The writes to `watches` made inside another module's transaction (the event log's record
 * of a poll). With WatchStore below, this module is the one writer of the table.
 */
export const watchWrites = {
  /**
   * A poll's end: the key's next poll is scheduled and its lease let go (with the baseline's
   * time on a first poll), and the digest of its snapshot is set to `digest.next`. Throws
   * LeaseLostError when the lease is no longer this replica's, or when the poll found nothing
   * changed from the digest alone (`digest.unchangedFrom`) and the key's digest is another by now.
   */
  async finishPoll(trx: Kysely<Tables>, keyHash: string, lease: PollLease, baselineAt: number | null, digest: DigestChange): Promise<void> {
    const schedule = await trx
      .updateTable('watches')
      .set({
        next_poll_at: lease.nextPollAt,
        leased_until: 0,
        lease_owner: null,
        snapshot_digest: digest.next,
        ...(baselineAt !== null ? { baseline_at: baselineAt } : {}),
      })
      .where('key_hash', '=', keyHash)
      .$if(lease.owner !== null, (q) => q.where('lease_owner', '=', lease.owner))
      .$if(digest.unchangedFrom !== undefined, (q) => q.where('snapshot_digest', '=', digest.unchangedFrom!))
      .executeTakeFirst();
    if ((lease.owner !== null || digest.unchangedFrom !== undefined) && Number(schedule.numUpdatedRows) === 0) throw new LeaseLostError();
  },

  /**
   * PostgreSQL: `finishPoll` as the first part of a record's one statement (event-log.ts): an
   * `UPDATE watches … RETURNING key_hash` whose one row says the lease (and digest) held; the
   * statement's other writes are made only when it returned that row.
   */
  finishPollSql(keyHash: string, lease: PollLease, baselineAt: number | null, digest: DigestChange): RawBuilder<unknown> {
    return sql`UPDATE watches SET next_poll_at = ${lease.nextPollAt}, leased_until = 0, lease_owner = NULL, snapshot_digest = ${digest.next}
        ${baselineAt !== null ? sql`, baseline_at = ${baselineAt}` : sql``}
      WHERE key_hash = ${keyHash}
        ${lease.owner !== null ? sql`AND lease_owner = ${lease.owner}` : sql``}
        ${digest.unchangedFrom !== undefined ? sql`AND snapshot_digest = ${digest.unchangedFrom}` : sql``}
      RETURNING key_hash`;
  },

  /** Whether a `finishPollSql` that returned no row means the poll may not be recorded (LeaseLostError), as `finishPoll` decides. */
  leaseChecked(lease: PollLease, digest: DigestChange): boolean {
    return lease.owner !== null || digest.unchangedFrom !== undefined;
  },

  /**
   * Throws LeaseLostError when `owner` no longer holds the key's poll lease; otherwise the row
   * stays locked to the end of `trx` (PostgreSQL), so no replica claims the key before it
   * commits. A baseline's slice checks this in its own transaction.
   */
  async holdLease(trx: Kysely<Tables>, keyHash: string, owner: string): Promise<void> {
    const held = await trx
      .updateTable('watches')
      .set({ lease_owner: owner })
      .where('key_hash', '=', keyHash)
      .where('lease_owner', '=', owner)
      .executeTakeFirst();
    if (Number(held.numUpdatedRows) === 0) throw new LeaseLostError();
  },
};

/**
 * Keys whose devices the poller watches (docs/triggers.md): a key is watched while it has an
 * active (or disabled) hook or called the polling trigger in the last 24 hours. Embedded mode remembers
 * the key's user; upstream mode must re-send the key, so it is kept sealed (AES-256-GCM).
 *
 * Replicas share the watches through leases: `claim` hands a key to one replica until its
 * lease ends, and the poll that follows moves the key's `next_poll_at` one interval on, so a
 * key is polled once per interval whichever replica polls it. The leases are the engine's
 * `WatchQueue` (watch-queue.ts), chosen once by services.ts.
 */
export class WatchStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly keyHooks: KeyHooks,
    private readonly queue: WatchQueue,
  ) {}

  /** This store as one request uses it: its database waits share the request's deadline (db/wait-budget.ts). */
  within(waits: RequestWaits | undefined): this {
    return requestView(this, this.db, waits);
  }

  /**
   * Creates or refreshes the watch of a key, resuming it if it was paused. A watch that needs a
   * poll now (no baseline yet, or paused until this call) is leased to `lease.owner` in the same
   * transaction when no poll holds it, so the request's own poll runs alone: `pollNow` says so.
   * When a background poll holds it (a baseline under way), that poll records what the request
   * would have.
   */
  async enrol(principal: Principal, viaTrigger: boolean, lease: RequestLease): Promise<{ watch: Watch; created: boolean; pollNow: boolean }> {
    const now = this.clock.now();
    const cipher = principal.scopes === null ? this.box.seal(principal.key) : null;
    return this.db.transaction(async (trx) => {
      const before = await trx.selectFrom('watches').select('paused_reason').where('key_hash', '=', principal.keyHash).executeTakeFirst();
      // Another replica may enrol the same key at this instant: the insert yields to it.
      const inserted = await trx
        .insertInto('watches')
        .values({ key_hash: principal.keyHash, user_id: principal.userId, key_cipher: cipher, last_trigger_at: viaTrigger ? now : null, created_at: now })
        .onConflict((oc) => oc.column('key_hash').doNothing())
        .returning('key_hash')
        .executeTakeFirst();
      if (!inserted) {
        await trx
          .updateTable('watches')
          .set((eb) => ({
            user_id: principal.userId,
            key_cipher: cipher ?? eb.ref('key_cipher'),
            last_trigger_at: viaTrigger ? now : eb.ref('last_trigger_at'),
            paused_reason: null,
          }))
          .where('key_hash', '=', principal.keyHash)
          .execute();
        await this.keyHooks.resumeKey(trx, principal.keyHash);
      }
      const watch = await trx.selectFrom('watches').select(columns).where('key_hash', '=', principal.keyHash).executeTakeFirstOrThrow();
      let pollNow = false;
      if (watch.baseline_at === null || (before?.paused_reason ?? null) !== null) {
        const leased = await trx
          .updateTable('watches')
          .set({ leased_until: now + lease.leaseMs, lease_owner: lease.owner })
          .where('key_hash', '=', principal.keyHash)
          .where('leased_until', '<=', now)
          .executeTakeFirst();
        pollNow = Number(leased.numUpdatedRows) > 0;
      }
      return { watch, created: inserted !== undefined, pollNow };
    });
  }

  get(keyHash: string): Promise<Watch | undefined> {
    return this.db.kysely.selectFrom('watches').select(columns).where('key_hash', '=', keyHash).executeTakeFirst();
  }

  async remove(keyHash: string): Promise<void> {
    await this.db.kysely.deleteFrom('watches').where('key_hash', '=', keyHash).execute();
  }

  /**
   * Leases up to `limit` watched keys to `owner` until `leaseMs` from now: keys not paused,
   * with an active hook or a trigger call in the last day, not leased by another replica, and
   * due (`WatchQueue.claimDue`).
   */
  claim(owner: string, options: WatchClaim): Promise<Watch[]> {
    return this.queue.claimDue(owner, this.clock.now(), options);
  }

  /** Moves on the leases `owner` still holds on `keys` (polls under way) to `leaseMs` from now; returns the keys renewed. */
  renew(owner: string, keys: string[], leaseMs: number): Promise<string[]> {
    return this.queue.renewLeases(owner, keys, this.clock.now() + leaseMs);
  }

  /** Ends a lease without a recorded poll (a failed poll): the key is due again after `delayMs`. */
  release(keyHash: string, owner: string, nextPollAt: number): Promise<void> {
    return this.queue.releaseLease(keyHash, owner, nextPollAt);
  }

  /** How long the most overdue watched key has waited past its poll time (0 when none is), for metrics. */
  async oldestOverdueMs(): Promise<number> {
    const now = this.clock.now();
    const row = await this.db.kysely
      .selectFrom('watches as w')
      .select((eb) => eb.fn.min('w.next_poll_at').as('next'))
      .where('w.paused_reason', 'is', null)
      .where('w.leased_until', '<=', now)
      .where(watchedAt(now))
      .executeTakeFirst();
    return row?.next === null || row?.next === undefined ? 0 : Math.max(0, now - Number(row.next));
  }

  /** The upstream key of a watch, unsealed for one poll. */
  key(watch: Pick<Watch, 'key_cipher'> & Partial<Watch>): string {
    return watch.key_cipher ? this.box.open(watch.key_cipher) : '';
  }

  /** Stops watching a key until it is used successfully again; its active hooks show why. */
  async pause(keyHash: string, reason: string): Promise<void> {
    // A pause meeting a record of a 410 (which locks its hooks in id order) may be a deadlock's victim: retried.
    await retryDeadlocks(() =>
      this.db.transaction(async (trx) => {
        await trx.updateTable('watches').set({ paused_reason: reason, leased_until: 0, lease_owner: null }).where('key_hash', '=', keyHash).execute();
        await this.keyHooks.pauseKey(trx, keyHash, reason);
      }),
    );
    this.keyHooks.paused?.();
  }
}

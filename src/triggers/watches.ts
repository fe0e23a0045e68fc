import { sql, type Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import type { Db } from '../db/database.js';
import { chunks } from '../db/chunks.js';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Principal } from '../sources/types.js';
import type { Clock } from '../time/timestamps.js';

/**
 * The writes to a key's hooks that go with its watch, in the same transaction: paused with it,
 * active again when it resumes. webhooks/hook-store.ts's hookWrites (the one writer of
 * `hooks`), passed in by services.ts: webhooks/ sits above triggers/.
 */
export interface KeyHooks {
  pauseKey(trx: Kysely<Tables>, keyHash: string, reason: string): Promise<void>;
  resumeKey(trx: Kysely<Tables>, keyHash: string): Promise<void>;
}

export interface Watch {
  key_hash: string;
  user_id: string | null;
  key_cipher: string | null;
  baseline_at: number | null;
  paused_reason: string | null;
  /** The digest of the statuses in the key's snapshot, when it has one (poll-comparison.ts). */
  snapshot_digest: string | null;
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

const dayMs = 86_400_000;
const columns = ['key_hash', 'user_id', 'key_cipher', 'baseline_at', 'paused_reason', 'snapshot_digest'] as const;

/**
 * A disabled hook keeps its key watched: the events it misses are still logged, so enabling it
 * and a recover deliver them (docs/webhooks.md, "When something goes wrong"), until the hook is
 * deleted a retention period after it was disabled.
 */
const watchedHookStatuses = ['active', 'disabled'] as const;

/**
 * Keys whose devices the poller watches (docs/triggers.md): a key is watched while it has an
 * active (or disabled) hook or called the polling trigger in the last 24 hours. Embedded mode remembers
 * the key's user; upstream mode must re-send the key, so it is kept sealed (AES-256-GCM).
 *
 * Replicas share the watches through leases: `claim` hands a key to one replica until its
 * lease ends, and the poll that follows moves the key's `next_poll_at` one interval on, so a
 * key is polled once per interval whichever replica polls it.
 */
export class WatchStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly keyHooks: KeyHooks,
  ) {}

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
   * (unless `all`) due. PostgreSQL skips rows another replica is claiming at this instant.
   */
  async claim(owner: string, options: { limit: number; leaseMs: number; all?: boolean }): Promise<Watch[]> {
    const now = this.clock.now();
    return this.db.transaction(async (trx) => {
      const rows = await trx
        .selectFrom('watches as w')
        .select(columns)
        .where('w.paused_reason', 'is', null)
        .where('w.leased_until', '<=', now)
        .$if(!options.all, (q) => q.where('w.next_poll_at', '<=', now))
        .where((eb) =>
          eb.or([
            eb('w.last_trigger_at', '>', now - dayMs),
            eb.exists(
              eb
                .selectFrom('hooks as h')
                .select(sql`1`.as('one'))
                .whereRef('h.key_hash', '=', 'w.key_hash')
                .where('h.status', 'in', watchedHookStatuses),
            ),
          ]),
        )
        .orderBy('w.next_poll_at')
        .limit(options.limit)
        .$if(this.db.engine === 'postgres', (q) => q.forUpdate().skipLocked())
        .execute();
      if (rows.length > 0) {
        await trx
          .updateTable('watches')
          .set({ leased_until: now + options.leaseMs, lease_owner: owner })
          .where(
            'key_hash',
            'in',
            rows.map((r) => r.key_hash),
          )
          .execute();
      }
      return rows;
    });
  }

  /** Moves on the leases `owner` still holds on `keys` (polls under way) to `leaseMs` from now. */
  async renew(owner: string, keys: string[], leaseMs: number): Promise<void> {
    const until = this.clock.now() + leaseMs;
    for (const part of chunks(keys)) {
      await this.db.kysely
        .updateTable('watches')
        .set({ leased_until: until })
        .where('key_hash', 'in', part)
        .where('lease_owner', '=', owner)
        .where('leased_until', '>', 0)
        .execute();
    }
  }

  /** Ends a lease without a recorded poll (a failed poll): the key is due again after `delayMs`. */
  async release(keyHash: string, owner: string, nextPollAt: number): Promise<void> {
    await this.db.kysely
      .updateTable('watches')
      .set({ leased_until: 0, lease_owner: null, next_poll_at: nextPollAt })
      .where('key_hash', '=', keyHash)
      .where('lease_owner', '=', owner)
      .execute();
  }

  /** How long the most overdue watched key has waited past its poll time (0 when none is), for metrics. */
  async oldestOverdueMs(): Promise<number> {
    const now = this.clock.now();
    const row = await this.db.kysely
      .selectFrom('watches as w')
      .select((eb) => eb.fn.min('w.next_poll_at').as('next'))
      .where('w.paused_reason', 'is', null)
      .where('w.leased_until', '<=', now)
      .where((eb) =>
        eb.or([
          eb('w.last_trigger_at', '>', now - dayMs),
          eb.exists(
            eb
              .selectFrom('hooks as h')
              .select(sql`1`.as('one'))
              .whereRef('h.key_hash', '=', 'w.key_hash')
              .where('h.status', 'in', watchedHookStatuses),
          ),
        ]),
      )
      .executeTakeFirst();
    return row?.next === null || row?.next === undefined ? 0 : Math.max(0, now - Number(row.next));
  }

  /** The upstream key of a watch, unsealed for one poll. */
  key(watch: Pick<Watch, 'key_cipher'> & Partial<Watch>): string {
    return watch.key_cipher ? this.box.open(watch.key_cipher) : '';
  }

  /** Stops watching a key until it is used successfully again; its active hooks show why. */
  async pause(keyHash: string, reason: string): Promise<void> {
    await this.db.transaction(async (trx) => {
      await trx.updateTable('watches').set({ paused_reason: reason, leased_until: 0, lease_owner: null }).where('key_hash', '=', keyHash).execute();
      await this.keyHooks.pauseKey(trx, keyHash, reason);
    });
  }
}

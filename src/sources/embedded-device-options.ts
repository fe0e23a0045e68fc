import type { Db } from '../db/database.js';
import { containsText } from '../db/dialect.js';

/**
 * Device dropdown pages straight from the embedded catalog (docs/options.md, "Big accounts"):
 * a user's access rows carry each device's label sort key and folded name, indexed per user,
 * so a page, a search and a count read the index, not the whole account.
 */

/** `label`: the dropdown's label order (sort key); `source`: list order (registered_at, id). */
export type DeviceOptionOrder = 'label' | 'source';

/** A row's place in its order: a page starts after it. */
export interface DeviceOptionKey {
  sortKey: string;
  registeredAt: string;
  id: string;
}

export interface DeviceOptionRow {
  name: string;
  id: string;
  key: DeviceOptionKey;
}

export interface DeviceOptionPageQuery {
  order: DeviceOptionOrder;
  /** Folded `q`: rows whose folded name contains it. */
  needle?: string;
  /** Keyset: start after this row… */
  after?: DeviceOptionKey;
  /** …or, without one, skip this many rows. */
  offset: number;
  limit: number;
}

export interface DeviceOptionStore {
  /** Whether every access row of the user has a sort key (written by an import of a covered name). */
  covered(userId: string | null): Promise<boolean>;
  count(userId: string | null, needle?: string): Promise<number>;
  page(userId: string | null, query: DeviceOptionPageQuery): Promise<DeviceOptionRow[]>;
}

export function embeddedDeviceOptions(db: Db): DeviceOptionStore {
  const rows = (userId: string | null, needle: string | undefined) =>
    db.kysely
      .selectFrom('device_access as a')
      .where('a.user_id', '=', userId ?? '')
      .$if(needle !== undefined, (q) => q.where(containsText(db.engine, 'a.folded', needle!)));

  return {
    async covered(userId) {
      const uncovered = await db.kysely
        .selectFrom('device_access')
        .select('device_id')
        .where('user_id', '=', userId ?? '')
        .where('sort_key', 'is', null)
        .limit(1)
        .executeTakeFirst();
      return uncovered === undefined;
    },

    async count(userId, needle) {
      const row = await rows(userId, needle)
        .select((eb) => eb.fn.countAll<number>().as('total'))
        .executeTakeFirstOrThrow();
      return Number(row.total);
    },

    async page(userId, { order, needle, after, offset, limit }) {
      const byLabel = order === 'label';
      // The page's keys from the index alone, then the names of just those devices.
      const keys = await rows(userId, needle)
        .select(['a.device_id as id', 'a.sort_key', 'a.registered_at'])
        .$if(after !== undefined && byLabel, (q) =>
          q.where((eb) => eb(eb.refTuple('a.sort_key', 'a.registered_at', 'a.device_id'), '>', eb.tuple(after!.sortKey, after!.registeredAt, after!.id))),
        )
        .$if(after !== undefined && !byLabel, (q) =>
          q.where((eb) => eb(eb.refTuple('a.registered_at', 'a.device_id'), '>', eb.tuple(after!.registeredAt, after!.id))),
        )
        .$if(byLabel, (q) => q.orderBy('a.sort_key'))
        .orderBy('a.registered_at')
        .orderBy('a.device_id')
        .limit(limit)
        .$if(after === undefined && offset > 0, (q) => q.offset(offset))
        .execute();
      if (keys.length === 0) return [];
      const names = new Map(
        (
          await db.kysely
            .selectFrom('devices')
            .select(['id', 'name'])
            .where(
              'id',
              'in',
              keys.map((k) => k.id),
            )
            .execute()
        ).map((d) => [d.id, d.name]),
      );
      return keys.flatMap((k) => {
        const name = names.get(k.id);
        // A device deleted between the two reads is left out, as if it had gone a moment earlier.
        return name === undefined ? [] : [{ name, id: k.id, key: { sortKey: k.sort_key ?? '', registeredAt: k.registered_at, id: k.id } }];
      });
    },
  };
}

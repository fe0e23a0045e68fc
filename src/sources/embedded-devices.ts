import { setImmediate } from 'node:timers/promises';
import type { Db } from '../db/database.js';
import type { DeviceRow } from '../db/tables.js';
import { AppError } from '../errors.js';
import { formatMicros, type Clock } from '../time/timestamps.js';
import type { Device, DevicePage, DeviceQuery, DeviceSource, Principal } from './types.js';
import type { DeviceState } from '../catalog/device.js';
import { inChunks } from '../db/chunks.js';

/**
 * Devices from the embedded catalog. A key sees the devices its user has `read` or `update`
 * access to (docs/api.md); everything else is absent. `is_online` is computed at read time.
 */
/** Where a keyset page starts: after this device in list order. */
interface OrderKey {
  registeredAt: string;
  id: string;
}

export function embeddedDeviceSource(db: Db, clock: Clock, heartbeatTimeoutMs: number): DeviceSource {
  /** Heartbeats strictly after this instant are "less than the timeout old". */
  const onlineSince = (): string => formatMicros((clock.now() - heartbeatTimeoutMs) * 1000);

  const toDevice = (row: DeviceRow, threshold: string): Device => ({
    id: row.id,
    name: row.name,
    timezone: row.timezone,
    screen_resolution: row.screen_resolution,
    screen_orientation: row.screen_orientation,
    registered_at: row.registered_at,
    published_at: row.published_at,
    last_heartbeat_at: row.last_heartbeat_at,
    is_online: row.last_heartbeat_at !== null && row.last_heartbeat_at > threshold,
    offline_startup: row.offline_startup === 1,
    offline_startup_delay_minutes: row.offline_startup_delay_minutes,
    open_dev_tools: row.open_dev_tools === 1,
    display_connected: row.display_connected === 1,
    connection_type: row.connection_type,
    wifi_ssid: row.wifi_ssid,
    wifi_signal_strength: row.wifi_signal_strength,
    updated_at: row.updated_at,
    created_at: row.created_at,
  });

  /**
   * The devices a user may read, from their access rows: the index on (user_id,
   * registered_at, device_id) gives them in list order, so a page reads only its own rows.
   */
  const visible = (userId: string | null) =>
    db.kysely
      .selectFrom('device_access as a')
      .innerJoin('devices as d', 'd.id', 'a.device_id')
      .where('a.user_id', '=', userId ?? '');

  const filtered = (principal: Principal, query: Omit<DeviceQuery, 'page' | 'pageSize'>, threshold: string) =>
    visible(principal.userId)
      .$if(query.ids !== undefined, (q) => q.where('a.device_id', 'in', query.ids!))
      .$if(query.isOnline === true, (q) => q.where('d.last_heartbeat_at', '>', threshold))
      .$if(query.isOnline === false, (q) => q.where((eb) => eb.or([eb('d.last_heartbeat_at', 'is', null), eb('d.last_heartbeat_at', '<=', threshold)])));

  /** Without filters the count is the user's access rows alone: one index range, no join. */
  const count = async (principal: Principal, query: DeviceQuery, threshold: string): Promise<number> => {
    const counted =
      query.ids === undefined && query.isOnline === undefined
        ? await db.kysely
            .selectFrom('device_access')
            .where('user_id', '=', principal.userId ?? '')
            .select((eb) => eb.fn.countAll<number>().as('total'))
            .executeTakeFirstOrThrow()
        : await filtered(principal, query, threshold)
            .select((eb) => eb.fn.countAll<number>().as('total'))
            .executeTakeFirstOrThrow();
    return Number(counted.total);
  };

  /**
   * A page of the user's devices in list order: the ids from the access index alone (skipping
   * or starting after a row there), then just those devices, so neither engine joins or sorts
   * the whole account for a deep page.
   */
  const pageOf = async (
    userId: string | null,
    from: OrderKey | null,
    offset: number,
    pageSize: number,
  ): Promise<{ rows: DeviceRow[]; last: OrderKey | null }> => {
    const keys = await db.kysely
      .selectFrom('device_access as a')
      .select(['a.device_id', 'a.registered_at'])
      .where('a.user_id', '=', userId ?? '')
      .$if(from !== null, (q) => q.where((eb) => eb(eb.refTuple('a.registered_at', 'a.device_id'), '>', eb.tuple(from!.registeredAt, from!.id))))
      .orderBy('a.registered_at')
      .orderBy('a.device_id')
      .limit(pageSize)
      .$if(offset > 0, (q) => q.offset(offset))
      .execute();
    const end = keys[keys.length - 1];
    if (!end) return { rows: [], last: null };
    const rows = new Map(
      (
        await db.kysely
          .selectFrom('devices')
          .selectAll()
          .where(
            'id',
            'in',
            keys.map((k) => k.device_id),
          )
          .execute()
      ).map((d) => [d.id, d]),
    );
    // A device deleted between the two reads is left out; the page still ends where its keys did.
    return {
      rows: keys.flatMap((k) => rows.get(k.device_id) ?? []),
      last: keys.length < pageSize ? null : { registeredAt: end.registered_at, id: end.device_id },
    };
  };

  return {
    mode: 'embedded',
    async list(principal: Principal, query: DeviceQuery): Promise<DevicePage> {
      const threshold = onlineSince();
      const total = await count(principal, query, threshold);
      if (query.ids === undefined && query.isOnline === undefined) {
        const { rows } = await pageOf(principal.userId, null, (query.page - 1) * query.pageSize, query.pageSize);
        return { total, data: rows.map((row) => toDevice(row, threshold)) };
      }
      const rows = await filtered(principal, query, threshold)
        .selectAll('d')
        .orderBy('a.registered_at')
        .orderBy('a.device_id')
        .limit(query.pageSize)
        .offset((query.page - 1) * query.pageSize)
        .execute();
      return { total, data: rows.map((row) => toDevice(row, threshold)) };
    },

    /** Keyset pages over the index: each page starts after the last one's (registered_at, id). */
    pages(principal: Principal, pageSize: number): AsyncGenerator<Device[]> {
      const threshold = onlineSince();
      return keysetPages(async (after) => {
        const { rows, last } = await pageOf(principal.userId, after, 0, pageSize);
        return { items: rows.map((row) => toDevice(row, threshold)), last };
      });
    },

    /** The same keyset pages, with each device's id and heartbeat only (one index-ordered join). */
    statePages(principal: Principal, pageSize: number): AsyncGenerator<DeviceState[]> {
      const threshold = onlineSince();
      return keysetPages(async (after) => {
        const rows: Array<{ device_id: string; registered_at: string; last_heartbeat_at: string | null }> = await visible(principal.userId)
          .select(['a.device_id', 'a.registered_at', 'd.last_heartbeat_at'])
          .$if(after !== null, (q) => q.where((eb) => eb(eb.refTuple('a.registered_at', 'a.device_id'), '>', eb.tuple(after!.registeredAt, after!.id))))
          .orderBy('a.registered_at')
          .orderBy('a.device_id')
          .limit(pageSize)
          .execute();
        const end = rows[rows.length - 1];
        return {
          items: rows.map((r) => ({
            id: r.device_id,
            last_heartbeat_at: r.last_heartbeat_at,
            is_online: r.last_heartbeat_at !== null && r.last_heartbeat_at > threshold,
          })),
          last: end && rows.length === pageSize ? { registeredAt: end.registered_at, id: end.device_id } : null,
        };
      });
    },

    async byIds(principal: Principal, ids: readonly string[]): Promise<Device[]> {
      const threshold = onlineSince();
      return inChunks(ids, async (part) =>
        (await visible(principal.userId).selectAll('d').where('d.id', 'in', part).execute()).map((row) => toDevice(row, threshold)),
      );
    },

    async get(principal: Principal, id: string): Promise<Device> {
      const row = await visible(principal.userId).selectAll('d').where('d.id', '=', id.toLowerCase()).executeTakeFirst();
      if (!row) throw new AppError('not_found', 'Device not found');
      return toDevice(row, onlineSince());
    },

    within: (waits) => embeddedDeviceSource(db.within(waits), clock, heartbeatTimeoutMs),
  };
}

/**
 * Pages in list order, each read by `page` after the last key of the one before (null: the
 * first), until one comes back without a last key. SQLite answers synchronously: other work
 * (requests of other accounts) is let in between pages.
 */
async function* keysetPages<T>(page: (after: OrderKey | null) => Promise<{ items: T[]; last: OrderKey | null }>): AsyncGenerator<T[]> {
  for (let after: OrderKey | null = null; ;) {
    const { items, last } = await page(after);
    if (items.length > 0) yield items;
    if (last === null) return;
    after = last;
    await setImmediate();
  }
}

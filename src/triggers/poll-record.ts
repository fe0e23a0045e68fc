import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables } from '../db/tables.js';
import type { DeviceEvent } from './transitions.js';
import type { SnapshotChanges } from './event-log-types.js';
import type { EventDeliveries } from './event-deliveries.js';
import { prepared } from '../db/prepared.js';
import { snapshotWrites } from './snapshots.js';
import { LeaseLostError, watchWrites, type PollLease } from './watches.js';

/** A poll's record: what `EventLog.record` writes. */
export interface PollRecord {
  keyHash: string;
  changes: SnapshotChanges;
  events: DeviceEvent[];
  /** The baseline's time on a key's first poll, else null. */
  baselineAt: number | null;
  lease: PollLease;
  now: number;
}

/** The parts of the statement that their tables' writers make (event-log.ts, the webhooks' fan-out). */
export interface RecordParts {
  events: (keyHash: string, input: string, guard: RawBuilder<unknown>, now: number) => RawBuilder<unknown>;
  deliveries: NonNullable<EventDeliveries['queueSql']>;
}

/**
 * Records of up to this many rows (events, changed and vanished devices) run as a prepared
 * statement (db/prepared.ts): its plan, made once for any parameters, takes each list for about
 * ten rows, which suits a few dozen; a bigger record is planned for its own lists.
 */
const preparedRows = 64;

/**
 * PostgreSQL: a poll's record as one statement (one round trip, one transaction, one commit),
 * the same writes as `EventLog.record`'s transaction: the key's schedule and lease (watches.ts
 * `finishPollSql`, whose row says the lease held: the other parts write only then), its snapshot
 * (snapshots.ts `writeSql`), the events not logged yet and their deliveries (the webhooks'
 * fan-out in SQL). Under a mass outage on a machine short of CPU the transaction was nine round
 * trips, the connection held while the service waited to be scheduled between them
 * (docs/benchmarks.md). Returns the events that were new; LeaseLostError, nothing written, when
 * the lease did not hold.
 */
export async function recordInOneStatement(kysely: Kysely<Tables>, record: PollRecord, parts: RecordParts): Promise<DeviceEvent[]> {
  const { keyHash, changes, events, lease, now } = record;
  const checked = watchWrites.leaseChecked(lease, changes.digest);
  // Unchecked (a request's own poll, no lease): written whatever the update found, as in the transaction.
  const guard = checked ? sql`EXISTS (SELECT 1 FROM held)` : sql`TRUE`;
  const column = (f: (e: DeviceEvent) => string) => sql`${events.map(f)}::text[]`;
  const statement = sql<{ held: number; fresh: string[] | null }>`
    WITH held AS (${watchWrites.finishPollSql(keyHash, lease, record.baselineAt, changes.digest)}),
    ${snapshotWrites.writeSql(keyHash, changes.changed, changes.vanished, now, guard)},
    input AS (
      SELECT * FROM unnest(${column((e) => e.id)}, ${column((e) => e.type)}, ${column((e) => e.device.id)}, ${column((e) => e.occurred_at)},
        ${column((e) => JSON.stringify(e))}) WITH ORDINALITY AS e(id, type, device_id, occurred_at, payload, ord)
    ),
    logged_rows AS (${parts.events(keyHash, 'input', guard, now)}),
    logged AS (SELECT l.seq, l.id, e.type, e.device_id, e.ord FROM logged_rows l JOIN input e ON e.id = l.id),
    ${parts.deliveries(keyHash, 'logged', now)}
    SELECT (SELECT count(*) FROM held)::int AS held, (SELECT array_agg(id) FROM logged_rows) AS fresh`;
  const small = events.length + changes.changed.length + changes.vanished.length <= preparedRows;
  const { rows } = await (small ? prepared(statement) : statement).execute(kysely);
  if (checked && rows[0]!.held === 0) throw new LeaseLostError();
  const logged = new Set(rows[0]!.fresh ?? []);
  return events.filter((e) => logged.has(e.id));
}

import { createHash } from 'node:crypto';
import type { DeviceState } from '../catalog/device.js';
import type { DeviceBatch, DeviceSource, Principal } from '../sources/types.js';
import type { SnapshotRow, SnapshotStore } from './snapshots.js';
import type { DigestChange } from './watches.js';
import { detectTransitions, type DeviceEvent, type Snapshot, type TransitionOf } from './transitions.js';

/** A baseline writes its snapshot in slices of this many rows, each in a transaction of its own. */
export const baselineSliceRows = 1000;

/**
 * A key whose snapshot holds at most this many rows (one page) has it read whole, in one
 * statement, at its poll's first page: no look-up per page and no count to find the devices
 * gone. Bigger keys read each page's rows by id.
 */
const wholeSnapshotRows = 1000;

/** A page of devices not seen before in the poll, as it waits to be compared. */
interface FreshPage<D> {
  devices: D[];
  ids: string[];
  unreadable: string[];
  nowMs: number;
}

/**
 * One poll's comparison of a key's devices with its stored snapshot, a page at a time: each
 * page's snapshot rows are read by the page's ids, so a poll holds one page, what changed and
 * the ids it has seen, never the key's whole snapshot or device list (docs/triggers.md); a
 * small key's snapshot (one page of rows at most) is read whole instead, in one statement.
 *
 * A small key also has a digest of its snapshot's statuses (the devices listed at its last poll,
 * each online or offline; `storedDigest`). While a poll's listing may still match it (at most
 * one page of devices, every record readable), its pages are held, not compared: a listing with
 * the key's digest changed nothing (no event, no row to write, none gone), and the poll reads
 * no snapshot row at all. Any other listing is compared row by row as above.
 */
export class PollComparison<D extends DeviceState> {
  /** Transitions found so far, in the order the devices came. */
  readonly events: Array<TransitionOf<D>> = [];
  /** Transitions decided from a heartbeat in the future (taken as the poll's time), to be warned about. */
  readonly future: Array<{ id: string; heartbeat: string }> = [];
  /** Snapshot rows to write: devices new to the snapshot, back from missing, or whose status changed. */
  private changed: SnapshotRow[] = [];
  private readonly seen = new Set<string>();
  /** Devices seen whose snapshot row in the database is listed (not missing): from before, or written by `flush`. */
  private matched = 0;
  /** Rows in `changed` of devices that had no listed snapshot row (new, or back from missing). */
  private pendingNew = 0;
  /** Snapshot rows this poll has written or handed over to be written. */
  private handedOver = 0;
  /** The key's whole snapshot when it is small, read at the first page; null: too big, read by page. */
  private whole: Map<string, Snapshot> | null | undefined;
  /** Pages held while the listing may still have the stored digest; null: comparing. */
  private held: Array<FreshPage<D>> | null;
  /** `id status` of every device seen, the next digest's input; null: no digest (too many devices, unreadable or repeated ones). */
  private statuses: string[] | null = [];
  /** Set when the listing had the stored digest: nothing changed. */
  private unchanged = false;

  /**
   * `owner`: the poll lease the poll runs under; a baseline's slices are written only while it
   * holds. `storedDigest`: the key's snapshot digest (none for a baseline).
   */
  constructor(
    private readonly snapshots: SnapshotStore,
    private readonly keyHash: string,
    private readonly heartbeatTimeoutMs: number,
    private readonly owner: string,
    private readonly storedDigest: string | null = null,
  ) {
    this.held = storedDigest === null ? null : [];
  }

  /**
   * Takes one page. A device already seen in this poll (an upstream's pages shifted under
   * it) counts once. Devices the source listed but could not read (`unreadable`: an invalid
   * upstream record, docs/upstream.md) keep their snapshot row as it is: neither changed nor
   * gone, and never an event; their next valid record is compared with it. So does a device left
   * out of earlier listings (its row marked missing): it is compared with what was last known.
   */
  async add(page: DeviceBatch<D>, nowMs: number): Promise<void> {
    const devices = page.filter((d) => !this.seen.has(d.id.toLowerCase()));
    const ids = devices.map((d) => d.id.toLowerCase());
    let repeated = false;
    for (const id of ids) {
      if (this.seen.has(id)) repeated = true;
      this.seen.add(id);
    }
    const unreadable = (page.unreadable ?? []).filter((id) => !this.seen.has(id));
    for (const id of unreadable) this.seen.add(id);
    if (repeated || unreadable.length > 0 || this.seen.size > wholeSnapshotRows) this.statuses = null;
    if (this.statuses) for (let i = 0; i < ids.length; i += 1) this.statuses.push(`${ids[i]} ${devices[i]!.is_online ? 'online' : 'offline'}`);
    const fresh = { devices, ids, unreadable, nowMs };
    if (!this.held) return this.compare(fresh);
    this.held.push(fresh);
    if (this.statuses === null) await this.compareHeld();
  }

  /** Compares the pages held (the listing will not have the stored digest). */
  private async compareHeld(): Promise<void> {
    const held = this.held ?? [];
    this.held = null;
    for (const page of held) await this.compare(page);
  }

  /** Compares one page's devices with their snapshot rows. */
  private async compare({ devices, ids, unreadable, nowMs }: FreshPage<D>): Promise<void> {
    const previous = await this.previousOf(unreadable.length > 0 ? [...ids, ...unreadable] : ids);
    for (const snap of previous.values()) if (!snap.missing) this.matched += 1;
    const part = detectTransitions(previous, devices, this.heartbeatTimeoutMs, nowMs);
    for (const event of part.events) this.events.push(event);
    for (const f of part.future) this.future.push(f);
    for (const [id, snap] of part.snapshot) {
      const before = previous.get(id);
      if (!before || before.missing || before.status !== snap.status) this.changed.push([id, snap]);
      if (!before || before.missing) this.pendingNew += 1;
    }
  }

  /** The digest of the statuses seen (sorted, so the order of the listing does not matter); null when the key has none. */
  get digest(): string | null {
    if (this.statuses === null) return null;
    return createHash('sha256').update(this.statuses.sort().join('\n')).digest('base64url').slice(0, 32);
  }

  /** What the poll leaves as the key's digest, and the one it found unchanged from (if so). */
  get digestChange(): DigestChange {
    return this.unchanged ? { next: this.storedDigest, unchangedFrom: this.storedDigest! } : { next: this.digest };
  }

  /** The snapshot rows of these devices: from the whole snapshot of a small key, else read by id. */
  private async previousOf(ids: string[]): Promise<Map<string, Snapshot>> {
    if (this.whole === undefined) this.whole = await this.snapshots.whole(this.keyHash, wholeSnapshotRows);
    if (this.whole === null) return this.snapshots.of(this.keyHash, ids);
    const found = new Map<string, Snapshot>();
    for (const id of ids) {
      const snap = this.whole.get(id);
      if (snap) found.set(id, snap);
    }
    return found;
  }

  /** How many snapshot rows wait to be written. */
  get pendingRows(): number {
    return this.changed.length;
  }

  /**
   * A baseline's slice: writes the rows found so far in a transaction of their own, so a
   * baseline of 100,000 devices neither holds them all nor the database's writer at once.
   */
  async flush(): Promise<void> {
    const added = this.pendingNew;
    const rows = this.takeChanged();
    await this.snapshots.writeSlice(this.keyHash, rows, this.owner);
    this.matched += added;
  }

  /** The snapshot rows still to write (the poll's record writes them); handed over once. */
  takeChanged(): SnapshotRow[] {
    const rows = this.changed;
    this.changed = [];
    this.pendingNew = 0;
    this.handedOver += rows.length;
    return rows;
  }

  /** How many snapshot rows this poll writes in all (its slices and its record). */
  get rowsWritten(): number {
    return this.handedOver + this.changed.length;
  }

  /**
   * Snapshot rows of devices this poll did not see (gone, or no longer readable by the key), at
   * the listing's end. A listing held whole is first matched against the stored digest.
   */
  async vanished(): Promise<string[]> {
    if (this.held) {
      if (this.digest === this.storedDigest) {
        this.held = null;
        this.unchanged = true;
        return [];
      }
      await this.compareHeld();
    }
    if (this.whole) return [...this.whole].filter(([id, snap]) => !snap.missing && !this.seen.has(id)).map(([id]) => id);
    if ((await this.snapshots.size(this.keyHash)) <= this.matched) return [];
    return this.snapshots.idsExcept(this.keyHash, this.seen);
  }
}

/**
 * Events decided from device states get their devices' whole records (read after the states,
 * for those that changed only); the heartbeat and status stay the ones the event was decided
 * from, so its id and payload agree. A device deleted (or no longer readable) between the two
 * reads gets no event: it leaves the key's snapshot at the next poll.
 */
export async function completeDevices(
  byIds: NonNullable<DeviceSource['byIds']>,
  principal: Principal,
  events: Array<TransitionOf<DeviceState>>,
): Promise<DeviceEvent[]> {
  if (events.length === 0) return [];
  const records = new Map(
    (
      await byIds(
        principal,
        events.map((e) => e.device.id),
      )
    ).map((d) => [d.id.toLowerCase(), d]),
  );
  return events.flatMap((event) => {
    const record = records.get(event.device.id);
    if (!record) return [];
    return [{ ...event, device: { ...record, id: event.device.id, last_heartbeat_at: event.device.last_heartbeat_at, is_online: event.device.is_online } }];
  });
}

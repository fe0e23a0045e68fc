import type { SnapshotRow } from './snapshots.js';
import type { EventType } from './transitions.js';
import type { DigestChange } from './watches.js';

/** What a poll changes in the key's snapshot. */
export interface SnapshotChanges {
  /** Devices new to the snapshot or whose status changed. */
  changed: readonly SnapshotRow[];
  /** Devices the poll no longer saw: marked missing (docs/triggers.md). */
  vanished: readonly string[];
  /** Snapshot rows the poll wrote in all, `changed` and a baseline's earlier slices (for the planner's statistics). */
  written: number;
  /** The snapshot's digest after the poll, and the one it was found unchanged from (DigestChange). */
  digest: DigestChange;
}

export interface RecentFilter {
  types?: EventType[];
  devices?: string[];
  limit: number;
}

/** What a retention sweep of the event log deleted, per table, and whether it was stopped part way. */
export interface PruneCounts {
  events: number;
  deliveries: number;
  attempts: number;
  stopped: boolean;
}

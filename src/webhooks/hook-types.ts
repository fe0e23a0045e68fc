import type { HookEventType as EventType } from '../catalog/event.js';

/** The shapes of a hook as the API and its store speak of it. */

/** What `PATCH /v1/hooks/{id}` may change; absent = unchanged. */
export interface HookChanges {
  events?: EventType[];
  /** Lower-case device ids, or null for every device. */
  device_ids?: string[] | null;
  enabled?: boolean;
}

/** Why a hook the key's owner disabled is not active (its `status_reason`). */
export const ownerDisabledReason = "Disabled by the key's owner (PATCH /v1/hooks/{id} with enabled: false)";

export interface HookInput {
  target_url: string;
  events: EventType[];
  /** Lower-case device ids, or null for every device. */
  device_ids: string[] | null;
}

/** Where a page of hooks ends: the last hook's creation time and id. */
export interface HookPosition {
  created_at: string;
  id: string;
}

export interface Hook {
  id: string;
  target_url: string;
  events: EventType[];
  device_ids: string[] | null;
  status: 'active' | 'paused' | 'disabled';
  status_reason: string | null;
  created_at: string;
}

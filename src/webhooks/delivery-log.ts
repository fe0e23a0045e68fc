import { sql } from 'kysely';
import type { Db } from '../db/database.js';
import { AppError } from '../errors.js';
import { formatMicros } from '../time/timestamps.js';
import type { Hook } from './hook-store.js';
import type { RequestWaits } from '../db/wait-budget.js';
import { requestView } from '../db/request-view.js';
import { pendingDueAt } from '../db/delivery-due.js';

/**
 * What a delivery is, as its hook's deliveries list shows it. `held`: pending while its hook is
 * disabled (the claims skip a disabled hook's queue). `failed`: a `webhook.test` delivery that
 * got no 2xx (a test is never retried, so never `dead`). `cancelled`: queued when its receiver
 * answered 410 (a recover sends it again).
 */
export const deliveryStates = ['pending', 'held', 'delivered', 'dead', 'cancelled', 'failed'] as const;
export type DeliveryState = (typeof deliveryStates)[number];

/** The event type of a test delivery (`POST /v1/hooks/{id}/test`). */
export const testEventType = 'webhook.test';

export interface DeliveryFilter {
  status?: DeliveryState;
  event_id?: string;
  /** When the event was recorded (ms): since ≤ recorded < until. */
  since?: number;
  until?: number;
  limit: number;
  /** Keyset: only deliveries with a smaller id (the previous page's last). */
  before?: number;
}

/** One delivery with its latest attempt (the fields of the attempt log's list before deliveries had ids). */
export interface DeliveryItem {
  delivery_id: string;
  event_id: string;
  event_type: string;
  webhook_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  attempted_at: string | null;
  next_attempt_at: string | null;
  outcome: string | null;
  delivery_status: DeliveryState;
}

export interface AttemptDetail {
  attempt: number;
  attempted_at: string;
  request_headers: Record<string, string> | null;
  status_code: number | null;
  response_body: string | null;
  duration_ms: number;
  error: string | null;
  next_attempt_at: string | null;
  outcome: string;
}

/** `dlv_<n>`: a delivery's id as the API shows it. */
export const deliveryIdText = (id: number): string => `dlv_${id}`;

/** The row id of `dlv_<n>`, or null when the text is not one. */
export function parseDeliveryId(text: string): number | null {
  const m = /^dlv_([1-9]\d{0,15})$/.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * The read side of a hook's deliveries (`GET /v1/hooks/{id}/deliveries[/{delivery_id}]`):
 * newest first in keyset pages by id (`deliveries_hook_order`), filtered by state, event and
 * when the event was recorded. The hook is read first (it says whether pending means held).
 */
export class DeliveryLog {
  constructor(private readonly db: Db) {}

  /** This store as one request uses it: its database waits share the request's deadline (db/wait-budget.ts). */
  within(waits: RequestWaits | undefined): this {
    return requestView(this, this.db, waits);
  }

  private base(hook: Hook, filter: Omit<DeliveryFilter, 'limit' | 'before'>) {
    const disabled = hook.status === 'disabled';
    const { status } = filter;
    return this.db.kysely
      .selectFrom('deliveries as d')
      .innerJoin('events as e', 'e.seq', 'd.event_seq')
      .where('d.hook_id', '=', hook.id)
      .$if(status !== undefined, (q) => {
        if (status === 'pending' || status === 'held')
          return (status === 'held') === disabled ? q.where('d.status', '=', 'pending') : q.where(sql<boolean>`1 = 0`);
        if (status === 'cancelled') return q.where('d.status', '=', 'cancelled').where('e.type', '!=', testEventType);
        if (status === 'failed') return q.where('d.status', '=', 'cancelled').where('e.type', '=', testEventType);
        return q.where('d.status', '=', status!);
      })
      .$if(filter.event_id !== undefined, (q) => q.where('e.id', '=', filter.event_id!))
      .$if(filter.since !== undefined, (q) => q.where('e.created_at', '>=', filter.since!))
      .$if(filter.until !== undefined, (q) => q.where('e.created_at', '<', filter.until!));
  }

  /** One page, newest first, with the count of every match and where the next page starts. */
  async page(hook: Hook, filter: DeliveryFilter): Promise<{ items: DeliveryItem[]; total: number; next: number | null }> {
    const { items, more } = await this.items(hook, filter);
    const { total } = await this.base(hook, filter)
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow();
    return { items, total: Number(total), next: more ? Number(items[items.length - 1]!.delivery_id.slice(4)) : null };
  }

  private async items(hook: Hook, filter: DeliveryFilter): Promise<{ items: DeliveryItem[]; more: boolean }> {
    const rows = await this.base(hook, filter)
      .leftJoin('delivery_attempts as a', (join) => join.on('a.id', '=', sql<number>`(SELECT max(x.id) FROM delivery_attempts x WHERE x.delivery_id = d.id)`))
      .select(['d.id', 'd.webhook_id', 'd.status', 'e.id as event_id', 'e.type as event_type'])
      .select(pendingDueAt('d').as('due_at'))
      .select(['a.attempt', 'a.status_code', 'a.error', 'a.duration_ms', 'a.attempted_at', 'a.outcome'])
      .$if(filter.before !== undefined, (q) => q.where('d.id', '<', filter.before!))
      .orderBy('d.id', 'desc')
      .limit(filter.limit + 1)
      .execute();
    const shown = rows.slice(0, filter.limit);
    const items = shown.map((r) => ({
      delivery_id: deliveryIdText(Number(r.id)),
      event_id: r.event_id,
      event_type: r.event_type,
      webhook_id: r.webhook_id,
      attempt: r.attempt === null ? 0 : Number(r.attempt),
      status_code: r.status_code,
      error: r.error,
      duration_ms: r.duration_ms === null ? null : Number(r.duration_ms),
      attempted_at: r.attempted_at,
      next_attempt_at: r.due_at === null ? null : formatMicros(Number(r.due_at) * 1000),
      outcome: r.outcome,
      delivery_status: stateOf(r.status, r.event_type, hook),
    }));
    return { items, more: rows.length > filter.limit };
  }

  /**
   * One delivery of the hook with every attempt its log keeps (the first and the latest,
   * attempt-log.ts `attemptsKept`), oldest first, and how many were dropped between them;
   * 404 `Delivery not found` otherwise.
   */
  async detail(hook: Hook, deliveryId: string): Promise<DeliveryItem & { attempts_dropped: number; attempts: AttemptDetail[] }> {
    const id = parseDeliveryId(deliveryId);
    const notFound = new AppError('not_found', 'Delivery not found');
    if (id === null) throw notFound;
    const [item] = (await this.items(hook, { limit: 1, before: id + 1 })).items.filter((i) => i.delivery_id === deliveryId);
    if (!item) throw notFound;
    const dropped = await this.db.kysely.selectFrom('deliveries').select('attempts_dropped').where('id', '=', id).executeTakeFirst();
    const attempts = await this.db.kysely
      .selectFrom('delivery_attempts')
      .select(['attempt', 'attempted_at', 'request_headers', 'status_code', 'response_body', 'duration_ms', 'error', 'next_attempt_at', 'outcome'])
      .where('delivery_id', '=', id)
      .orderBy('id')
      .execute();
    return {
      ...item,
      attempts_dropped: Number(dropped?.attempts_dropped ?? 0),
      attempts: attempts.map((a) => ({
        ...a,
        attempt: Number(a.attempt),
        duration_ms: Number(a.duration_ms),
        request_headers: a.request_headers === null ? null : (JSON.parse(a.request_headers) as Record<string, string>),
      })),
    };
  }
}

function stateOf(status: string, eventType: string, hook: Hook): DeliveryState {
  if (status === 'pending') return hook.status === 'disabled' ? 'held' : 'pending';
  if (status === 'cancelled' && eventType === testEventType) return 'failed';
  return status as DeliveryState;
}

import { useState } from 'preact/hooks';
import { api } from '../api';
import { when } from '../format';
import { useAction, useApi } from '../use-api';
import { Badge, ErrorMessage, Loading } from './status';
import { DeliveryDetail } from './delivery-detail';
import { Pager, useCursorPages } from './pager';

/** A delivery as `GET /v1/hooks/{id}/deliveries` lists it: its latest attempt's fields plus its id. */
export interface DeliveryItem {
  delivery_id: string;
  event_id: string;
  event_type?: string;
  webhook_id?: string;
  attempt?: number;
  status_code?: number | null;
  error?: string | null;
  attempted_at?: string | null;
  next_attempt_at?: string | null;
  delivery_status?: string;
  status?: string;
}

const pageSize = 20;
const statuses = ['pending', 'held', 'delivered', 'dead'];

const isoOrUndefined = (local: string) => (local ? new Date(local).toISOString() : undefined);

export function Deliveries({ base, version }: { base: string; version: number }) {
  const [status, setStatus] = useState('');
  const [eventId, setEventId] = useState('');
  const [since, setSince] = useState('');
  const [until, setUntil] = useState('');
  const [filters, setFilters] = useState({ status: '', event_id: '', since: '', until: '' });
  const pages = useCursorPages();
  const [openId, setOpenId] = useState<string | null>(null);
  const [resent, setResent] = useState(0);
  const list = useApi(() => {
    const from = pages.cursor;
    if (from) return api<DeliveryItem[]>(from);
    return api<DeliveryItem[]>(`${base}/deliveries`, {
      query: {
        limit: pageSize,
        status: filters.status,
        event_id: filters.event_id,
        since: isoOrUndefined(filters.since),
        until: isoOrUndefined(filters.until),
      },
    });
  }, [base, filters, pages.page, pages.cursor, version, resent]);
  const resend = useAction(async (id: string) => {
    await api(`${base}/deliveries/${encodeURIComponent(id)}/resend`, { method: 'POST' });
    setResent((n) => n + 1);
    return id;
  });

  const apply = (e: Event) => {
    e.preventDefault();
    setFilters({ status, event_id: eventId.trim(), since, until });
    pages.reset();
  };

  return (
    <section aria-labelledby="deliveries-title">
      <h3 id="deliveries-title">Deliveries</h3>
      <form class="grid" onSubmit={apply} aria-label="Delivery filters">
        <label>
          Status
          <select name="status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">Any</option>
            {statuses.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Event id
          <input name="event_id" value={eventId} onInput={(e) => setEventId(e.currentTarget.value)} />
        </label>
        <label>
          Recorded since
          <input type="datetime-local" name="since" value={since} onInput={(e) => setSince(e.currentTarget.value)} />
        </label>
        <label>
          Until
          <input type="datetime-local" name="until" value={until} onInput={(e) => setUntil(e.currentTarget.value)} />
        </label>
        <button type="submit" class="secondary">
          Filter
        </button>
      </form>
      <ErrorMessage error={list.error ?? resend.error} />
      {resend.result && <p role="status">Resent delivery {resend.result}: one more attempt is on its way.</p>}
      {list.loading && !list.data && <Loading what="deliveries" />}
      {list.data && (
        <div class="overflow-auto">
          <table class="striped" data-testid="delivery-table">
            <caption class="muted">
              {list.data.total ?? list.data.data.length} deliver{(list.data.total ?? list.data.data.length) === 1 ? 'y' : 'ies'}
            </caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Last attempt</th>
                <th scope="col">Next attempt</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((d) => (
                <tr key={d.delivery_id}>
                  <td>
                    {d.event_type ?? ''} <code>{d.event_id}</code>
                  </td>
                  <td>
                    <Badge value={d.delivery_status ?? d.status ?? 'unknown'} />
                  </td>
                  <td>{d.attempt ?? '—'}</td>
                  <td>{d.status_code != null ? `HTTP ${d.status_code}` : (d.error ?? '—')}</td>
                  <td>{when(d.attempted_at ?? null)}</td>
                  <td>{when(d.next_attempt_at ?? null)}</td>
                  <td>
                    <div class="actions">
                      <button
                        type="button"
                        class="secondary outline"
                        onClick={() => setOpenId(d.delivery_id)}
                        aria-label={`Attempts of delivery ${d.delivery_id}`}
                      >
                        Attempts
                      </button>
                      <button type="button" class="secondary" onClick={() => resend.run(d.delivery_id)} aria-label={`Resend delivery ${d.delivery_id}`}>
                        Resend
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
              {list.data.data.length === 0 && (
                <tr>
                  <td colSpan={7}>No deliveries match.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
      )}
      <Pager pages={pages} next={list.data?.next} noun="deliveries" />
      {openId && <DeliveryDetail key={`${openId}-${resent}`} base={base} deliveryId={openId} onClose={() => setOpenId(null)} />}
    </section>
  );
}
